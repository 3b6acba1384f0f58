#include "server/simulate/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/scaling/schedule.h"
#include "server/simulate/engine_internal.h"

namespace wsched::simulate::internal {

absl::Status Engine::Prepare() {
  for (const core::NodePool& pool : catalog_.pools) {
    auto timings = input_.timings.find(pool.id);
    pool_index_[pool.id] = pools_.size();
    by_demand_ = by_demand_ || pool.mig.kind == core::MigLayoutKind::kByDemand;
    pools_.emplace_back(pool, timings == input_.timings.end() ? PoolTimings() : timings->second);
  }
  order_.resize(trace_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return trace_[a].time < trace_[b].time; });
  class_of_.resize(trace_.size());
  const core::WorkspaceClass* fallback = catalog_.DefaultClass();
  for (size_t i = 0; i < trace_.size(); ++i) {
    const Arrival& a = trace_[i];
    const core::WorkspaceClass* cls = a.class_id.empty() ? fallback : catalog_.FindClass(a.class_id);
    if (cls == nullptr) {
      return absl::InvalidArgumentError(
          a.class_id.empty()
              ? absl::StrCat("trace line ", a.line, ", column class: empty, and the catalog has "
                             "no default class")
              : absl::StrCat("trace line ", a.line, ", column class: class \"", a.class_id,
                             "\" is not in the catalog"));
    }
    class_of_[i] = cls;
  }
  return absl::OkStatus();
}

void Engine::WarmStart(absl::Time now) {
  for (size_t i = 0; i < pools_.size(); ++i) {
    SimPool& pool = pools_[i];
    pool.ledger.Open(now);
    if (!input_.options.warm_start) continue;
    int want = std::max(pool.pool->min_size, scaling::WarmBufferAt(pool.pool->warm_buffer, now).nodes);
    want = std::clamp(want, 0, std::max(0, pool.pool->max_size));
    for (int n = 0; n < want; ++n) StartNode(pool, i, now, /*warm=*/true);
  }
}

bool Engine::Rested(absl::Time now) const {
  if (queue_.size() > 0) return false;
  for (const SimPool& pool : pools_) {
    int resting = std::max(pool.pool->min_size, scaling::WarmBufferAt(pool.pool->warm_buffer, now).nodes);
    resting = std::clamp(resting, 0, std::max(0, pool.pool->max_size));
    if (pool.ledger.booting() > 0 || pool.ledger.registered() > resting) return false;
  }
  return true;
}

absl::StatusOr<SimulationResult> Engine::Run() {
  if (absl::Status prepared = Prepare(); !prepared.ok()) return prepared;
  if (input_.options.tick <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("tick must be above zero");
  }
  if (trace_.empty()) return absl::InvalidArgumentError("the trace has no workspaces");
  const absl::Time start = trace_[order_.front()].time;
  WarmStart(start);
  NeedEvaluation(start);
  // Once nothing runs, boots, waits or is still to arrive, the simulation
  // ends when every pool is back at its resting size (min_size or the warm
  // buffer in effect): idle nodes cost until they go, and a scale-down
  // schedule may keep them for hours. A day after that at most.
  absl::Duration settle = absl::Hours(24);
  for (const core::NodePool& pool : catalog_.pools) {
    settle = std::max(settle, std::max(pool.scale_down.unneeded, pool.scale_down.delay_after_add) +
                                  input_.options.batching_window + 4 * input_.options.tick);
  }
  size_t next_arrival = 0;
  absl::Time quiet_since = absl::InfiniteFuture();
  absl::Time now = start;
  while (true) {
    const bool quiet = next_arrival == order_.size() && running_ == 0 && booting_ == 0;
    if (!quiet) {
      quiet_since = absl::InfiniteFuture();
    } else if (quiet_since == absl::InfiniteFuture()) {
      quiet_since = now;
    }
    if (quiet && Rested(now)) break;
    const absl::Time stop = quiet_since + settle;
    absl::Time next_event = events_.empty() ? absl::InfiniteFuture() : events_.top().at;
    if (next_arrival < order_.size()) {
      next_event = std::min(next_event, trace_[order_[next_arrival]].time);
    }
    const absl::Time next_evaluation = std::min(evaluate_at_, NextWake());
    const absl::Time next = std::min({next_event, next_evaluation, stop});
    if (next == absl::InfiniteFuture() || next >= stop) {
      now = stop == absl::InfiniteFuture() ? now : stop;
      break;
    }
    now = next;
    if (next_event <= next_evaluation) {
      // Everything that happens at `now`, then the placements it allows.
      while (next_arrival < order_.size() && trace_[order_[next_arrival]].time == now) {
        Arrive(order_[next_arrival++], now);
      }
      while (!events_.empty() && events_.top().at == now) {
        Event event = events_.top();
        events_.pop();
        switch (event.kind) {
          case Kind::kEnd: End(event.index, now); break;
          case Kind::kNodeUp: NodeUp(event.index, now); break;
          case Kind::kDriverReady: DriverReady(event.index, now); break;
          case Kind::kPlanRelayouts: PlanRelayouts(now); break;
          case Kind::kRelayoutDone: RelayoutDone(event.index, now); break;
          case Kind::kBudgetReach: BudgetReach(event.index, event.generation, now); break;
          case Kind::kBudgetStop: BudgetStop(event.index, now); break;
          case Kind::kBudgetRetry:
            retry_at_.erase(limited_[event.index]);
            Drain(nullptr, now);
            NeedEvaluation(now);
            break;
        }
      }
      continue;
    }
    evaluate_at_ = absl::InfiniteFuture();
    Evaluate(now);
  }
  return Finish(now);
}

SimulationResult Engine::Finish(absl::Time end) {
  SimulationResult result;
  result.start = trace_[order_.front()].time;
  result.end = end;
  result.evaluations = evaluations_;
  result.unplaceable = std::move(unplaceable_);
  result.budgets = budgets_.Finish(end);
  result.workspaces.resize(trace_.size());
  for (size_t i = 0; i < live_.size(); ++i) {
    const Live& w = live_[i];
    const Arrival& a = trace_[w.arrival];
    std::string pool = w.pool < pools_.size() ? pools_[w.pool].pool->id : "";
    if (!placed_at_[i] && w.pool < pools_.size()) pools_[w.pool].ledger.NeverPlaced();
    WorkspaceOutcome& out = result.workspaces[w.arrival];
    out = {a.id, std::move(pool), a.time, placed_at_[i]};
    out.estimate_phases = w.estimate_phases;
    out.estimate_p90 = w.estimate_p90;
  }
  for (SimPool& pool : pools_) {
    result.pools.push_back(pool.ledger.Finish(end, input_.options.long_wait));
  }
  return result;
}

}  // namespace wsched::simulate::internal

namespace wsched::simulate {

absl::StatusOr<SimulationResult> Simulate(const SimulationInput& input,
                                          const std::vector<Arrival>& trace) {
  internal::Engine engine(input, trace);
  return engine.Run();
}

}  // namespace wsched::simulate
