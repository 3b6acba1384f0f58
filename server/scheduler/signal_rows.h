// A pool's scaling signal (and a MIG re-layout) to and from the store's row for it. The store keeps
// its own row type (store::SignalRow), so it builds without the scaling
// library; the scaling controller, which publishes and reads the rows, maps.
#ifndef WSCHED_SERVER_SCHEDULER_SIGNAL_ROWS_H_
#define WSCHED_SERVER_SCHEDULER_SIGNAL_ROWS_H_

#include <cstdint>
#include <string>

#include "server/placement/relayout_plan.h"
#include "server/scaling/scaling_signal.h"
#include "server/store/types.h"

namespace wsched::scheduler {

// The row a leader publishes: `generation` replaces the signal's own (the
// leader continues its predecessor's generations).
store::SignalRow SignalRowOf(const scaling::PoolSignal& signal, int64_t generation,
                             std::string leader);

// The signal a row holds; its generation is the row's.
scaling::PoolSignal PoolSignalOf(const store::SignalRow& row);

// A MIG re-layout under way to and from its row, likewise.
store::RelayoutRow RelayoutRowOf(const placement::RelayoutOrder& order, std::string leader);
placement::RelayoutOrder RelayoutOrderOf(const store::RelayoutRow& row);

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SIGNAL_ROWS_H_
