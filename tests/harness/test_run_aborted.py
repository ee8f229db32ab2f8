"""The run-stopping message of a misconfigured model (harness/failures.py): alias, litellm id,
what to set, and the first error, worked out by hand for each kind of hint (issue 29)."""

from __future__ import annotations

import sys
import types

from masbench.harness import failures
from masbench.harness.failures import RunAborted, aborted_message
from masbench.store import RunFailed


def _gateway(spec, fatal=("default", "openai/gpt-x", "AuthenticationError[401]: no key")):
    return types.SimpleNamespace(fatal=fatal, models={"default": spec})


def test_the_message_names_the_alias_the_id_the_key_env_and_the_first_error() -> None:
    gw = _gateway(types.SimpleNamespace(api_key_env="MY_KEY"))
    assert aborted_message(gw) == ("model 'default' (openai/gpt-x) is misconfigured: set the environment variable "
                                   "MY_KEY (named by the model's api_key_env). First error: "
                                   "AuthenticationError[401]: no key")


def test_a_model_without_a_key_env_or_spec_gets_the_hint_from_its_error(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    gw = _gateway(object(), fatal=("big", "gpt-9", "NotFoundError[404]: no such model"))
    gw.models = {}  # an alias the gateway has no spec of: no key env
    assert aborted_message(gw) == ("model 'big' (gpt-9) is misconfigured: check the model id 'gpt-9' (a litellm id "
                                   "like 'openai/gpt-4o-mini'). First error: NotFoundError[404]: no such model")
    gw = _gateway(types.SimpleNamespace(api_key_env=None), fatal=("default", "m", "E: Unauthorized"))
    assert aborted_message(gw) == ("model 'default' (m) is misconfigured: check the model's credentials and id. "
                                   "First error: E: Unauthorized")


def test_run_aborted_is_a_run_failure_and_the_store_helpers_are_re_exported() -> None:
    assert issubclass(RunAborted, RunFailed)
    from masbench.store import failure_reasons, supersede_failed
    assert failures.failure_reasons is failure_reasons and failures.supersede_failed is supersede_failed
    assert set(failures.__all__) == {"RunAborted", "aborted_message", "failure_reasons", "supersede_failed"}
