{
  "targets": [
    {
      "target_name": "mmap_native",
      "sources": [
        "../src/native/addon.cc",
        "../src/native/util/errors.cc",
        "../src/native/util/args.cc",
        "../src/native/util/crc32c.cc",
        "../src/native/util/crc32c-binding.cc",
        "../src/native/kernels/cpu-isa.cc",
        "../src/native/kernels/gemm-arm64-neon.cc",
        "../src/native/kernels/gemm-args.cc",
        "../src/native/kernels/gemm-binding.cc",
        "../src/native/kernels/gemm-chain.cc",
        "../src/native/kernels/gemm-chain-binding.cc",
        "../src/native/kernels/gemm-plan-handle.cc",
        "../src/native/kernels/gemm-portable.cc",
        "../src/native/kernels/gemm-run.cc",
        "../src/native/kernels/gemm-x86-avx2.cc",
        "../src/native/kernels/gemm-x86-avx512.cc",
        "../src/native/kernels/gemm-x86-sse2.cc",
        "../src/native/kernels/thread-pool.cc",
        "../src/native/xnn-graph/checked-flatbuffer.cc",
        "../src/native/xnn-graph/named-keys.cc",
        "../src/native/xnn-graph/value-ids.cc",
        "../src/native/xnn-graph/xnn-graph-binding.cc",
        "../src/native/xnn-graph/xnn-graph-reader.cc"
      ],
      "conditions": [
        [
          "OS!='win'",
          {
            "sources": [
              "../src/native/posix/platform.cc",
              "../src/native/posix/sys.cc",
              "../src/native/posix/prefault.cc",
              "../src/native/objects/file.cc",
              "../src/native/objects/background-write.cc",
              "../src/native/objects/mapping.cc"
            ]
          },
          { "sources": ["../src/native/windows/platform.cc"] }
        ]
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"],
      "xcode_settings": {
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra", "-Werror"]
      }
    }
  ]
}
