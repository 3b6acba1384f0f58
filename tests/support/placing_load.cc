#include "tests/support/placing_load.h"

#include "absl/strings/str_cat.h"
#include "tests/support/workspaces.h"

namespace wsched::testing {

PlacingLoad::PlacingLoad(std::shared_ptr<grpc::Channel> channel, std::string prefix,
                         int clients) {
  for (int c = 0; c < clients; ++c) {
    threads_.emplace_back([this, channel, prefix, c] {
      for (int i = 0; !stop_; ++i) {
        const std::string id = absl::StrCat(prefix, "-", c, "-", i);
        v1::Workspace out;
        const Clock::time_point start = Clock::now();
        grpc::Status status = PlaceAs(channel, id, "gpu-1x", &out, std::chrono::seconds(3));
        std::lock_guard<std::mutex> lock(mu_);
        if (status.ok()) {
          acked_.insert(id);
          acks_.push_back({start, Clock::now()});
        } else {
          codes_.insert(status.error_code());
          if (status.error_code() == grpc::StatusCode::INTERNAL) internal_ = status.error_message();
        }
      }
    });
  }
}

PlacingLoad::~PlacingLoad() { Stop(); }

void PlacingLoad::Stop() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

std::set<std::string> PlacingLoad::acked() {
  std::lock_guard<std::mutex> lock(mu_);
  return acked_;
}

std::set<grpc::StatusCode> PlacingLoad::codes() {
  std::lock_guard<std::mutex> lock(mu_);
  return codes_;
}

std::string PlacingLoad::internal() {
  std::lock_guard<std::mutex> lock(mu_);
  return internal_;
}

std::optional<PlacingLoad::Clock::time_point> PlacingLoad::FirstAckOfACallStartedAfter(
    Clock::time_point t) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Clock::time_point> first;
  for (const auto& [start, end] : acks_) {
    if (start >= t && (!first || end < *first)) first = end;
  }
  return first;
}

}  // namespace wsched::testing
