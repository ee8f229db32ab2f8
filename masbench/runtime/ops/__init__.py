"""Node op bodies, one module per op: :mod:`.agent` (one model call, structured-output retries),
:mod:`.select` (a selector picks a candidate), :mod:`.vote` (majority), :mod:`.python` (a
registered function), :mod:`.design` (a sub-design) and :mod:`.until` (a loop's stop condition).
:func:`~masbench.runtime.node.run_node` dispatches to them.

A body returns the node's :class:`~masbench.runtime.values.Val`; it may raise (the dispatcher
records the error), and adds its model usage to the given :class:`~masbench.runtime.scope.Stats`.
To add an op: a body here, a ``kind`` in :class:`~masbench.spec.design.NodeSpec`, a check in
:mod:`masbench.runtime.node_check`, a branch in :func:`~masbench.runtime.node.run_node`.
"""
