// An SVG chart of a simulation: per pool, demand (GPUs or CPU held and
// waiting, in nodes' worth) and the nodes paid for over time, one line per
// variant. Hand-written SVG: no fonts or scripts beyond the SVG itself, so
// it renders the same in a browser, an image viewer or a docs page.
#ifndef WSCHED_SERVER_SIMULATE_CHART_H_
#define WSCHED_SERVER_SIMULATE_CHART_H_

#include <string>
#include <vector>

#include "server/simulate/engine.h"

namespace wsched::simulate {

struct ChartSeries {
  std::string variant;
  const SimulationResult* result = nullptr;
};

struct ChartOptions {
  int width = 960;         // Pixels; the plot is a little narrower.
  int panel_height = 220;  // Per pool.
  // Pools to draw, in order; empty: every pool that had demand or nodes.
  std::vector<std::string> pools;
};

// The whole SVG document. Demand is drawn from the first series (the
// variants replay the same trace, so their demand differs only by waits).
std::string RenderChart(const std::vector<ChartSeries>& series, const ChartOptions& options = {});

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_CHART_H_
