// FUZZ_CHECK: a property every input must keep. On failure it prints what
// broke and aborts, which libFuzzer records as a crash with the input.
#ifndef WSCHED_TESTS_FUZZ_FUZZ_CHECK_H_
#define WSCHED_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, ...)                                           \
  do {                                                                       \
    if (!(condition)) {                                                      \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__,       \
                   __LINE__, #condition);                                    \
      std::fprintf(stderr, __VA_ARGS__);                                     \
      std::fprintf(stderr, "\n");                                            \
      std::abort();                                                          \
    }                                                                        \
  } while (false)

#endif  // WSCHED_TESTS_FUZZ_FUZZ_CHECK_H_
