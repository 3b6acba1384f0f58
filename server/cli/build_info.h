// The version and commit wschedctl was built from, set by CMake at configure
// time (build_info.cc.in); "unknown" where CMake could not tell.
#ifndef WSCHED_SERVER_CLI_BUILD_INFO_H_
#define WSCHED_SERVER_CLI_BUILD_INFO_H_

namespace wsched::cli {

// The project() version of the top-level CMakeLists.txt.
const char* BuildVersion();
// The git commit of the source tree at configure time.
const char* BuildCommit();

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_BUILD_INFO_H_
