#include "server/cli/simulate_command.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/catalog/load.h"
#include "server/catalog/units.h"
#include "server/cli/output.h"
#include "server/cli/run.h"
#include "server/cli/structured_output.h"
#include "server/simulate/chart.h"
#include "server/simulate/simulation_report.h"
#include "server/simulate/scenario.h"
#include "server/simulate/synthetic.h"
#include "server/simulate/trace.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::cli {
namespace {

constexpr char kUsage[] =
    "usage: wschedctl simulate --catalog=FILE --trace=FILE [--timings=FILE] [--node-start=D]\n"
    "         [--driver-install=D] [--set=K=V ...] [--variant=NAME:K=V,.. ...] [--long-wait=5m]\n"
    "         [--chart=out.svg] [-o table|json]\n"
    "       wschedctl simulate trace [--workspaces=N] [--days=N] [--seed=N] [--start=TIME]\n"
    "         [--mix=CLASS=W,..] [--burst-class=CLASS]\n";

// What went wrong and the exit status it earns.
struct Failure {
  std::string message;
  int exit = kExitUsage;
};

absl::StatusOr<std::string> ReadWholeFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, " ", path, ": cannot be read"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<absl::Duration> DurationFlag(const std::string& flag, const std::string& text) {
  absl::StatusOr<absl::Duration> d = catalog::ParseCatalogDuration(text);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": want a duration from 0 such as 90s, 3m or 1h30m, not \"", text, "\""));
  }
  return *d;
}

absl::Duration DurationOf(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// Default timings, then the timings file, then the flags.
absl::StatusOr<std::map<std::string, simulate::PoolTimings>> BaseTimings(
    const core::Catalog& catalog, const SimulateFlags& flags) {
  std::map<std::string, simulate::PoolTimings> timings;
  // PoolTimings' own defaults, which `wschedctl help simulate` shows too.
  simulate::PoolTimings defaults;
  defaults.node_start_source = "default (the server's --default_node_start_time)";
  defaults.driver_install_source = "default (the node image has the driver)";
  for (const core::NodePool& pool : catalog.pools) timings[pool.id] = defaults;
  if (!flags.timings.empty()) {
    absl::StatusOr<std::string> json = ReadWholeFile("--timings", flags.timings);
    if (!json.ok()) return json.status();
    absl::Status read = ReadTimingsExport(*json, flags.timings, catalog, timings);
    if (!read.ok()) return read;
  }
  if (!flags.node_start.empty()) {
    absl::StatusOr<absl::Duration> d = DurationFlag("--node-start", flags.node_start);
    if (!d.ok()) return d.status();
    for (auto& [pool, t] : timings) {
      t.node_start = *d;
      t.node_start_source = "flag --node-start";
    }
  }
  if (!flags.driver_install.empty()) {
    absl::StatusOr<absl::Duration> d = DurationFlag("--driver-install", flags.driver_install);
    if (!d.ok()) return d.status();
    for (const core::NodePool& pool : catalog.pools) {
      if (!pool.is_gpu()) continue;
      timings[pool.id].driver_install = *d;
      timings[pool.id].driver_install_source = "flag --driver-install";
    }
  }
  return timings;
}

// The baseline (catalog + timings + --set) and every --variant on top of it.
absl::StatusOr<std::vector<simulate::Scenario>> Scenarios(const core::Catalog& catalog,
                                                          const SimulateFlags& flags) {
  simulate::Scenario base;
  base.name = "baseline";
  base.input.catalog = catalog;
  absl::StatusOr<std::map<std::string, simulate::PoolTimings>> timings = BaseTimings(catalog, flags);
  if (!timings.ok()) return timings.status();
  base.input.timings = *std::move(timings);
  if (!flags.long_wait.empty()) {
    absl::StatusOr<absl::Duration> d = DurationFlag("--long-wait", flags.long_wait);
    if (!d.ok()) return d.status();
    base.input.options.long_wait = *d;
  }
  absl::StatusOr<simulate::Scenario> baseline =
      simulate::WithSettings(base, "baseline", flags.sets, "--set");
  if (!baseline.ok()) return baseline.status();
  std::vector<simulate::Scenario> scenarios = {*baseline};
  std::set<std::string> names = {"baseline"};
  for (const std::string& text : flags.variants) {
    absl::StatusOr<simulate::VariantSpec> spec = simulate::ParseVariant(text);
    if (!spec.ok()) return spec.status();
    if (!names.insert(spec->name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--variant ", text, ": the name \"", spec->name,
          "\" is taken (\"baseline\" is the catalog with --set; give each variant its own)"));
    }
    absl::StatusOr<simulate::Scenario> variant = simulate::WithSettings(
        *baseline, spec->name, spec->settings, absl::StrCat("--variant ", spec->name));
    if (!variant.ok()) return variant.status();
    scenarios.push_back(*std::move(variant));
  }
  return scenarios;
}

std::string DurationText(absl::Duration d) {
  return d == absl::ZeroDuration() ? "0s" : absl::FormatDuration(d);
}

std::string TimingsLine(const simulate::PoolResult& pool) {
  std::string line = absl::StrCat(pool.pool, ": node start ", DurationText(pool.timings.node_start),
                                  " (", pool.timings.node_start_source, ")");
  if (pool.gpu) {
    absl::StrAppend(&line, ", driver install ", DurationText(pool.timings.driver_install), " (",
                    pool.timings.driver_install_source, ")");
  }
  return line;
}

void PrintTable(const std::vector<simulate::VariantResult>& results, size_t workspaces,
                absl::Duration long_wait, const Options& options) {
  const simulate::SimulationResult& first = results.front().result;
  auto when = [](absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()); };
  std::cout << "trace: " << workspaces << " workspaces from " << when(first.start)
            << "; timings (baseline):\n";
  for (const simulate::PoolResult& pool : first.pools) std::cout << "  " << TimingsLine(pool) << "\n";
  std::vector<std::vector<std::string>> rows = simulate::ReportTable(results, long_wait);
  Table table(rows.front());
  for (size_t i = 1; i < rows.size(); ++i) table.Add(rows[i]);
  table.Print("no pool had workspaces or nodes", !options.no_headers);
  std::vector<std::vector<std::string>> budgets = simulate::BudgetTable(results);
  if (budgets.size() == 1) return;  // No limit replayed.
  std::cout << "\nspending limits (GPU-hours):\n";
  Table limits(budgets.front());
  for (size_t i = 1; i < budgets.size(); ++i) limits.Add(budgets[i]);
  limits.Print("", !options.no_headers);
}

absl::Status WriteChart(const std::string& path, const std::vector<simulate::VariantResult>& results) {
  std::vector<simulate::ChartSeries> series;
  for (const simulate::VariantResult& v : results) series.push_back({v.name, &v.result});
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << simulate::RenderChart(series);
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("--chart ", path, ": cannot be written"));
  return absl::OkStatus();
}

// Bad flags and settings are usage errors (2); unreadable files and a trace
// or timings file that does not read are 1, as for a catalog.
int Fails(const absl::Status& status, int exit = kExitUsage) {
  std::cerr << "simulate: " << status.message() << "\n";
  return exit;
}

int Simulate(const Options& options) {
  const SimulateFlags& flags = options.simulate;
  if (flags.catalog.empty() || flags.trace.empty()) {
    std::cerr << "simulate: --catalog and --trace are required\n" << kUsage;
    return kExitUsage;
  }
  if (options.output != OutputFormat::kTable && options.output != OutputFormat::kJson &&
      options.output != OutputFormat::kYaml) {
    std::cerr << "simulate: -o must be table, json or yaml\n";
    return kExitUsage;
  }
  absl::StatusOr<core::Catalog> catalog = catalog::LoadCatalog(flags.catalog);
  if (!catalog.ok()) {
    std::cerr << "simulate: --catalog " << flags.catalog << ": " << catalog.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> text = ReadWholeFile("--trace", flags.trace);
  if (!text.ok()) return Fails(text.status(), 1);
  absl::StatusOr<std::vector<simulate::Arrival>> trace = simulate::ParseTraceCsv(*text);
  if (!trace.ok()) return Fails(trace.status(), 1);
  absl::StatusOr<std::vector<simulate::Scenario>> scenarios = Scenarios(*catalog, flags);
  if (!scenarios.ok()) {
    return Fails(scenarios.status(),
                 absl::StartsWith(scenarios.status().message(), "--timings") ? 1 : kExitUsage);
  }
  std::vector<simulate::VariantResult> results;
  for (const simulate::Scenario& scenario : *scenarios) {
    absl::StatusOr<simulate::SimulationResult> result = simulate::Simulate(scenario.input, *trace);
    if (!result.ok()) return Fails(result.status(), 1);
    results.push_back({scenario.name, scenario.settings, *std::move(result)});
  }
  for (const std::string& line : results.front().result.unplaceable) {
    std::cerr << "simulate: never placeable: " << line << "\n";
  }
  if (!flags.chart.empty()) {
    if (absl::Status written = WriteChart(flags.chart, results); !written.ok()) {
      return Fails(written, 1);
    }
  }
  const absl::Duration long_wait = scenarios->front().input.options.long_wait;
  if (options.structured()) return PrintStructured(simulate::ReportJson(results, long_wait), options);
  if (!flags.chart.empty()) std::cout << "chart: " << flags.chart << "\n";
  PrintTable(results, trace->size(), long_wait, options);
  return 0;
}

// "standard=0.4,gpu-1x=0.2" -> the mix.
absl::StatusOr<std::vector<std::pair<std::string, double>>> ParseMix(const std::string& text) {
  std::vector<std::pair<std::string, double>> mix;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    double weight;
    if (kv.first.empty() || !absl::SimpleAtod(kv.second, &weight) || weight < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mix: want CLASS=WEIGHT,... with weights from 0 (standard=0.4,gpu-1x=0.2), not \"", part,
          "\""));
    }
    mix.emplace_back(std::string(kv.first), weight);
  }
  if (mix.empty()) return absl::InvalidArgumentError("--mix: no CLASS=WEIGHT given");
  return mix;
}

int Trace(const Options& options) {
  const SimulateFlags& flags = options.simulate;
  simulate::SyntheticOptions synthetic;
  auto positive = [](const std::string& flag, const std::string& text, int64_t max,
                     int64_t& out) -> absl::Status {
    if (text.empty()) return absl::OkStatus();
    if (!absl::SimpleAtoi(text, &out) || out < 1 || out > max) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": want a whole number from 1 to ", max, ", not \"", text, "\""));
    }
    return absl::OkStatus();
  };
  int64_t days = synthetic.days, seed = static_cast<int64_t>(synthetic.seed);
  for (absl::Status s : {positive("--workspaces", flags.workspaces, 5'000'000, synthetic.workspaces),
                         positive("--days", flags.days, 366, days),
                         positive("--seed", flags.seed, int64_t{1} << 62, seed)}) {
    if (!s.ok()) return Fails(s);
  }
  synthetic.days = static_cast<int>(days);
  synthetic.seed = static_cast<uint64_t>(seed);
  if (!flags.start.empty()) {
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, flags.start, &synthetic.start, &error)) {
      return Fails(absl::InvalidArgumentError(absl::StrCat(
          "--start: want an RFC 3339 time such as 2026-03-02T00:00:00Z, not \"", flags.start, "\"")));
    }
  }
  if (!flags.mix.empty()) {
    absl::StatusOr<std::vector<std::pair<std::string, double>>> mix = ParseMix(flags.mix);
    if (!mix.ok()) return Fails(mix.status());
    synthetic.mix = *std::move(mix);
  }
  if (!flags.burst_class.empty()) synthetic.burst_class = flags.burst_class;
  std::cout << simulate::TraceCsv(simulate::SyntheticTrace(synthetic));
  return 0;
}

}  // namespace

absl::Status ReadTimingsExport(absl::string_view json, absl::string_view file,
                               const core::Catalog& catalog,
                               std::map<std::string, simulate::PoolTimings>& timings) {
  v1::ListPoolsResponse listing;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(std::string(json), &listing, parse).ok() ||
      listing.pools().empty()) {
    v1::Pool one;
    if (!google::protobuf::util::JsonStringToMessage(std::string(json), &one, parse).ok() ||
        one.id().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--timings ", file, ": not the JSON of `wschedctl pools -o json` (nor of one pool)"));
    }
    *listing.add_pools() = one;
  }
  for (const v1::Pool& pool : listing.pools()) {
    if (catalog.FindPool(pool.id()) == nullptr) continue;
    simulate::PoolTimings& t = timings[pool.id()];
    const v1::PoolTimings& measured = pool.timings();
    if (measured.has_node_start_median() && measured.node_start_samples() > 0) {
      t.node_start = DurationOf(measured.node_start_median());
      t.node_start_source = absl::StrCat("--timings ", file, ": median of ",
                                         measured.node_start_samples(), " node starts");
    } else if (measured.has_default_node_start()) {
      t.node_start = DurationOf(measured.default_node_start());
      t.node_start_source =
          absl::StrCat("--timings ", file, ": the server's default, no node start measured");
    }
    const v1::KernelTiming* most = nullptr;
    for (const v1::KernelTiming& kernel : measured.driver_installs()) {
      if (kernel.samples() > 0 && (most == nullptr || kernel.samples() > most->samples())) {
        most = &kernel;
      }
    }
    if (most != nullptr) {
      t.driver_install = DurationOf(most->median());
      t.driver_install_source = absl::StrCat("--timings ", file, ": median of ", most->samples(),
                                             " installs on kernel ", most->kernel_version());
    } else {
      t.driver_install = absl::ZeroDuration();
      t.driver_install_source =
          absl::StrCat("--timings ", file, ": no driver install measured (the image has it)");
    }
  }
  return absl::OkStatus();
}

int SimulateCommand(const std::vector<std::string>& args, const Options& options) {
  if (args.empty()) return Simulate(options);
  if (args.size() == 1 && args[0] == "trace") return Trace(options);
  std::cerr << "simulate: unknown argument \"" << args[0] << "\"\n" << kUsage;
  return kExitUsage;
}

}  // namespace wsched::cli
