"""Read-only tools over a store: diagnostics, ablation, router evaluation (layer 7)."""
