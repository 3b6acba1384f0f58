#include "server/log/log.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wsched::log {
namespace {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarning: return "warning";
    case Level::kError: return "error";
  }
  return "info";
}

}  // namespace

std::string Render(Level level, absl::string_view message, std::initializer_list<Field> fields,
                   absl::string_view timestamp) {
  nlohmann::ordered_json line;
  line["ts"] = std::string(timestamp);
  line["level"] = LevelName(level);
  line["msg"] = std::string(message);
  for (const auto& [key, value] : fields) line[std::string(key)] = value;
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Write(Level level, absl::string_view message, std::initializer_list<Field> fields) {
  std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::string line = Render(level, message, fields, ts);
  line.push_back('\n');
  // One fwrite per line keeps lines whole when threads log together.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace wsched::log
