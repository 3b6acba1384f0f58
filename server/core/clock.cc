#include "server/core/clock.h"

#include "absl/time/clock.h"

namespace wsched::core {

Clock WallClock() {
  return [] { return absl::Now(); };
}

}  // namespace wsched::core
