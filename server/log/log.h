// Structured logs: one JSON object per line on stderr, so log shippers can
// index fields without parsing prose.
#ifndef WSCHED_SERVER_LOG_LOG_H_
#define WSCHED_SERVER_LOG_LOG_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace wsched::log {

enum class Level { kDebug, kInfo, kWarning, kError };

using Field = std::pair<absl::string_view, std::string>;

void Write(Level level, absl::string_view message, std::initializer_list<Field> fields = {});

inline void Info(absl::string_view message, std::initializer_list<Field> fields = {}) {
  Write(Level::kInfo, message, fields);
}
inline void Warning(absl::string_view message, std::initializer_list<Field> fields = {}) {
  Write(Level::kWarning, message, fields);
}
inline void Error(absl::string_view message, std::initializer_list<Field> fields = {}) {
  Write(Level::kError, message, fields);
}

// Renders one log line (exposed for tests).
std::string Render(Level level, absl::string_view message, std::initializer_list<Field> fields,
                   absl::string_view timestamp);

}  // namespace wsched::log

#endif  // WSCHED_SERVER_LOG_LOG_H_
