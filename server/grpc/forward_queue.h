// How a front door groups the calls it forwards to one placer
// (docs/architecture.md, "One placer, many front doors"): at most
// `max_in_flight` batches are on the wire at once. A call that finds a
// slot free goes at once, alone; one that finds them all taken waits, and
// goes with every call that waited with it when a batch is answered. So an
// idle front door adds no wait, and a busy one sends one RPC per placer
// commit instead of one per call: the placer's group commit gathers
// calls the same way.
//
// Not thread-safe: the owner holds its lock around every call.
#ifndef WSCHED_SERVER_GRPC_FORWARD_QUEUE_H_
#define WSCHED_SERVER_GRPC_FORWARD_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace wsched::grpc_api {

template <typename Call>
class ForwardQueue {
 public:
  ForwardQueue(int max_in_flight, size_t max_batch)
      : max_in_flight_(std::max(1, max_in_flight)), max_batch_(std::max<size_t>(1, max_batch)) {}

  // The batch to send now: {call} when a slot is free (the slot is then
  // taken), else nothing, and the call waits.
  std::vector<Call> Add(Call call) {
    waiting_.push_back(std::move(call));
    if (in_flight_ >= max_in_flight_) return {};
    ++in_flight_;
    return Take();
  }

  // A batch was answered (or failed). The batch to send in the slot it
  // frees: the calls that waited, up to max_batch; nothing when none
  // waited, and the slot is free again.
  std::vector<Call> Answered() {
    if (waiting_.empty()) {
      --in_flight_;
      return {};
    }
    return Take();
  }

  int in_flight() const { return in_flight_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  std::vector<Call> Take() {
    const size_t n = std::min(max_batch_, waiting_.size());
    std::vector<Call> batch;
    batch.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
    return batch;
  }

  const int max_in_flight_;
  const size_t max_batch_;
  int in_flight_ = 0;
  std::deque<Call> waiting_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_FORWARD_QUEUE_H_
