"""The loop controller and the node steps (runtime/steps.py) on scripted gateways: rounds counted
by hand from the script (issue 29)."""

from __future__ import annotations
