# Injected into llama.cpp's own CMake project by scripts/setup.sh
# (CMAKE_PROJECT_llama.cpp_INCLUDE: CMake runs this file right after llama.cpp's `project()` call).
#
# llama-cpp-python forces llama.cpp's `common` library on (set(... CACHE ... FORCE) in its
# CMakeLists.txt, so -DLLAMA_BUILD_COMMON=OFF on the command line is overwritten). The Python
# bindings never load it: they open libllama and libggml* with ctypes, and llama-cpp-python's
# own Emscripten build turns `common` off the same way. `common` (plus the cpp-httplib it pulls in)
# was ~40% of the compile; the vision library (mtmd) is switched off by -DLLAVA_BUILD=OFF.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
