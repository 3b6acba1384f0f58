#include "server/simulate/chart.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace wsched::simulate {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#8c564b", "#e377c2", "#17becf"};
constexpr int kLeft = 56, kRight = 16, kTop = 34, kBottom = 30;

std::string Escape(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

const PoolResult* FindPool(const SimulationResult& result, const std::string& pool) {
  for (const PoolResult& p : result.pools) {
    if (p.pool == pool) return &p;
  }
  return nullptr;
}

// The highest value of a step function within each of `buckets` equal
// slices of [start, end]: a short spike stays visible at any width.
std::vector<double> BucketMax(const std::vector<Step>& steps, absl::Time start, absl::Time end,
                              int buckets, const std::function<double(const Step&)>& value) {
  std::vector<double> out(buckets, 0);
  const absl::Duration width = (end - start) / buckets;
  size_t i = 0;
  double current = 0;
  for (int b = 0; b < buckets; ++b) {
    const absl::Time bucket_end = start + width * (b + 1);
    double high = current;
    while (i < steps.size() && steps[i].at < bucket_end) {
      current = value(steps[i++]);
      high = std::max(high, current);
    }
    out[b] = high;
  }
  return out;
}

// A step line through the bucket values.
std::string StepPath(const std::vector<double>& values, double x0, double dx, double y0,
                     double scale) {
  std::string path;
  for (size_t b = 0; b < values.size(); ++b) {
    double x = x0 + dx * static_cast<double>(b);
    double y = y0 - values[b] * scale;
    absl::StrAppendFormat(&path, "%s%.1f,%.1f H%.1f", b == 0 ? "M" : " L", x, y, x + dx);
  }
  return path;
}

// Gridlines every day for long spans, else every few hours.
absl::Duration TimeGrid(absl::Duration span) {
  for (absl::Duration step : {absl::Minutes(10), absl::Hours(1), absl::Hours(3), absl::Hours(6),
                              absl::Hours(12), absl::Hours(24), absl::Hours(24 * 7)}) {
    if (span / step <= 14) return step;
  }
  return absl::Hours(24 * 30);
}

std::string Panel(const std::vector<ChartSeries>& series, const std::string& pool, int top,
                  const ChartOptions& options, absl::Time start, absl::Time end) {
  const PoolResult& first = *FindPool(*series.front().result, pool);
  const int plot_width = options.width - kLeft - kRight;
  const int plot_height = options.panel_height - kTop - kBottom;
  const int buckets = std::max(1, plot_width / 2);
  const double unit = static_cast<double>(std::max<int64_t>(1, first.unit_per_node));
  std::vector<double> demand = BucketMax(first.steps, start, end, buckets, [&](const Step& s) {
    return static_cast<double>(s.demand) / unit;
  });
  std::vector<std::vector<double>> nodes;
  double high = *std::max_element(demand.begin(), demand.end());
  for (const ChartSeries& s : series) {
    const PoolResult* p = FindPool(*s.result, pool);
    nodes.push_back(p == nullptr ? std::vector<double>(buckets, 0)
                                 : BucketMax(p->steps, start, end, buckets, [](const Step& step) {
                                     return static_cast<double>(step.nodes);
                                   }));
    high = std::max(high, *std::max_element(nodes.back().begin(), nodes.back().end()));
  }
  const int y_max = std::max(1, static_cast<int>(std::ceil(high)));
  const int y_step = std::max(1, (y_max + 4) / 5);
  const double x0 = kLeft, y0 = top + kTop + plot_height;
  const double dx = static_cast<double>(plot_width) / buckets;
  const double scale = static_cast<double>(plot_height) / (y_max + y_step * 0.25);

  std::string svg = absl::StrFormat(
      "<text x=\"%d\" y=\"%d\" class=\"title\">%s: demand (%s held and waiting, in nodes) vs "
      "nodes paid for</text>\n",
      kLeft, top + 18, Escape(pool), first.gpu ? "GPUs" : "CPU");
  for (int y = 0; y <= y_max; y += y_step) {
    double py = y0 - y * scale;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
                          "<text x=\"%d\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">%d</text>\n",
                          kLeft, py, kLeft + plot_width, py, kLeft - 6, py + 4, y);
  }
  const absl::Duration grid = TimeGrid(end - start);
  const absl::Time first_line =
      absl::UnixEpoch() + absl::Ceil(start - absl::UnixEpoch(), grid);
  for (absl::Time t = first_line; t <= end; t += grid) {
    double px = x0 + absl::FDivDuration(t - start, end - start) * plot_width;
    const char* format = grid >= absl::Hours(24) ? "%a %m-%d" : "%a %H:%M";
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"middle\">%s"
                          "</text>\n",
                          px, top + kTop, px, y0, px, y0 + 16,
                          absl::FormatTime(format, t, absl::UTCTimeZone()));
  }
  absl::StrAppendFormat(&svg, "<path d=\"%s V%.1f H%.1f Z\" class=\"demand\"/>\n",
                        StepPath(demand, x0, dx, y0, scale), y0, x0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    absl::StrAppendFormat(&svg, "<path d=\"%s\" class=\"nodes\" stroke=\"%s\"/>\n",
                          StepPath(nodes[i], x0, dx, y0, scale), kColors[i % std::size(kColors)]);
  }
  absl::StrAppendFormat(&svg,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n",
                        kLeft, top + kTop, plot_width, plot_height);
  return svg;
}

std::vector<std::string> PoolsToDraw(const std::vector<ChartSeries>& series,
                                     const ChartOptions& options) {
  if (!options.pools.empty()) return options.pools;
  std::vector<std::string> pools;
  for (const PoolResult& p : series.front().result->pools) {
    bool active = false;
    for (const ChartSeries& s : series) {
      const PoolResult* q = FindPool(*s.result, p.pool);
      for (const Step& step : q == nullptr ? std::vector<Step>() : q->steps) {
        active = active || step.nodes > 0 || step.demand > 0;
      }
    }
    if (active) pools.push_back(p.pool);
  }
  return pools;
}

}  // namespace

std::string RenderChart(const std::vector<ChartSeries>& series, const ChartOptions& options) {
  std::vector<std::string> pools =
      series.empty() ? std::vector<std::string>() : PoolsToDraw(series, options);
  std::erase_if(pools, [&](const std::string& pool) {
    return FindPool(*series.front().result, pool) == nullptr;
  });
  const int legend = 24;
  const int height = legend + static_cast<int>(pools.size()) * options.panel_height + 8;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "font-family=\"sans-serif\">\n"
      "<style>.title{font-size:13px;font-weight:bold}.axis{font-size:10px;fill:#555}"
      ".grid{stroke:#e5e5e5}.frame{fill:none;stroke:#999}"
      ".demand{fill:#bbb;fill-opacity:0.45;stroke:#888;stroke-width:0.8}"
      ".nodes{fill:none;stroke-width:1.6}.legend{font-size:12px}</style>\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      options.width, height, options.width, height);
  if (series.empty() || pools.empty()) return svg + "</svg>\n";
  absl::Time start = series.front().result->start, end = series.front().result->end;
  for (const ChartSeries& s : series) {
    start = std::min(start, s.result->start);
    end = std::max(end, s.result->end);
  }
  if (end <= start) end = start + absl::Minutes(1);
  int x = kLeft;
  absl::StrAppendFormat(&svg,
                        "<rect x=\"%d\" y=\"8\" width=\"14\" height=\"10\" class=\"demand\"/>"
                        "<text x=\"%d\" y=\"17\" class=\"legend\">demand</text>\n",
                        x, x + 18);
  x += 80;
  for (size_t i = 0; i < series.size(); ++i) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" y1=\"13\" x2=\"%d\" y2=\"13\" stroke=\"%s\" "
                          "stroke-width=\"3\"/><text x=\"%d\" y=\"17\" class=\"legend\">nodes, "
                          "%s</text>\n",
                          x, x + 16, kColors[i % std::size(kColors)], x + 20,
                          Escape(series[i].variant));
    x += 80 + 7 * static_cast<int>(series[i].variant.size());
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    svg += Panel(series, pools[i], legend + static_cast<int>(i) * options.panel_height, options,
                 start, end);
  }
  return svg + "</svg>\n";
}

}  // namespace wsched::simulate
