// Small shell scripts in a private temp dir, for the actuator tests.
#ifndef WSCHED_SERVER_SCALING_TEST_SCRIPTS_H_
#define WSCHED_SERVER_SCALING_TEST_SCRIPTS_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace wsched::scaling::testing {

class ScriptDir {
 public:
  ScriptDir() {
    std::string pattern = (std::filesystem::path(::testing::TempDir()) / "wsched-actuator-XXXXXX");
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~ScriptDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScriptDir(const ScriptDir&) = delete;
  ScriptDir& operator=(const ScriptDir&) = delete;

  std::string Path(const std::string& name) const { return (path_ / name).string(); }

  // Writes an executable /bin/sh script; returns its path.
  std::string Script(const std::string& name, const std::string& body) const {
    std::string path = Path(name);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }

  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Polls until the file contains `needle` (scripts run asynchronously).
  bool WaitFor(const std::string& name, const std::string& needle,
               absl::Duration timeout = absl::Seconds(10)) const {
    absl::Time until = absl::Now() + timeout;
    while (absl::Now() < until) {
      if (Read(name).find(needle) != std::string::npos) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace wsched::scaling::testing

#endif  // WSCHED_SERVER_SCALING_TEST_SCRIPTS_H_
