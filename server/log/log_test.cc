#include "server/log/log.h"

#include "gtest/gtest.h"

namespace wsched::log {
namespace {

TEST(Log, RendersOneJsonObjectWithEscapedFields) {
  EXPECT_EQ(Render(Level::kWarning, "catalog rejected", {{"path", "a\"b"}, {"errors", "2"}},
                   "2026-01-01T00:00:00.000Z"),
            R"({"ts":"2026-01-01T00:00:00.000Z","level":"warning","msg":"catalog rejected",)"
            R"("path":"a\"b","errors":"2"})");
}

}  // namespace
}  // namespace wsched::log
