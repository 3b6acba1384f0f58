// One pass of the pending queue over free capacity, the one both the
// server's queue drain (pipeline/queue_drain.h) and the what-if simulator
// (simulate/engine.h) run: the entries decided in queue order, each on
// what the ones before it left (the caller's `decide` holds the room it
// chose before the next is decided).
//
// Holds only take room away during a pass, so a class that found no room
// (NotNow) would find none later in the same pass either: its later
// entries are not decided again, and once no class of the pass has room,
// the rest of the queue is not walked.
#ifndef WSCHED_SERVER_PLACEMENT_QUEUE_PASS_H_
#define WSCHED_SERVER_PLACEMENT_QUEUE_PASS_H_

#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "server/placement/decide.h"

namespace wsched::placement {

class QueuePass {
 public:
  // The classes the pass may place (those of the entries in its scope).
  explicit QueuePass(absl::flat_hash_set<std::string> classes) : classes_(std::move(classes)) {}

  // Whether an entry of `class_id` is to be decided now: in scope, and its
  // class has not run out of room in this pass.
  bool ShouldDecide(const std::string& class_id) const {
    return classes_.contains(class_id) && !no_room_.contains(class_id);
  }
  // What deciding an entry of `class_id` gave.
  void Decided(const std::string& class_id, const Decision& decision) {
    if (std::holds_alternative<NotNow>(decision)) no_room_.insert(class_id);
  }
  // No class of the pass has room left: the rest of the queue need not be walked.
  bool Done() const { return no_room_.size() >= classes_.size(); }

  // Runs the pass. `for_each(visit)` calls `visit(entry)` for each entry in
  // queue order and stops when it returns false; `class_of(entry)` is a
  // pointer to the entry's class id, or null for an entry not to be
  // decided now; `decide(entry)` decides for it and holds what it chose
  // (std::optional<Decision>: nullopt when it could not be decided).
  template <typename ForEach, typename ClassOf, typename Decide>
  void Run(ForEach for_each, ClassOf class_of, Decide decide) {
    for_each([&](const auto& entry) {
      if (Done()) return false;
      const std::string* class_id = class_of(entry);
      if (class_id == nullptr || !ShouldDecide(*class_id)) return true;
      if (std::optional<Decision> decision = decide(entry)) Decided(*class_id, *decision);
      return true;
    });
  }

 private:
  const absl::flat_hash_set<std::string> classes_;
  absl::flat_hash_set<std::string> no_room_;
};

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_QUEUE_PASS_H_
