#include "server/simulate/scenario.h"

#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/catalog/mig.h"
#include "server/catalog/units.h"

namespace wsched::simulate {
namespace {

constexpr int kMaxNodes = 10'000;

absl::Status Refuse(absl::string_view origin, absl::string_view setting, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(origin, " ", setting, ": ", rule));
}

absl::StatusOr<int> WholeNumber(absl::string_view value) {
  int n;
  if (!absl::SimpleAtoi(value, &n) || n < 0 || n > kMaxNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("want a whole number from 0 to ", kMaxNodes, ", not \"", value, "\""));
  }
  return n;
}

absl::StatusOr<absl::Duration> Duration(absl::string_view value) {
  absl::StatusOr<absl::Duration> d = catalog::ParseCatalogDuration(value);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("want a duration from 0 such as 90s, 10m or 1h30m, not \"", value, "\""));
  }
  return *d;
}

// Setters of one pool's settings, by the key after "pool.<id>.".
using PoolSetter = std::function<absl::Status(absl::string_view value, core::NodePool& pool,
                                              PoolTimings& timings)>;

PoolSetter SetCount(int core::NodePool::*field) {
  return [field](absl::string_view value, core::NodePool& pool, PoolTimings&) -> absl::Status {
    absl::StatusOr<int> n = WholeNumber(value);
    if (!n.ok()) return n.status();
    pool.*field = *n;
    return absl::OkStatus();
  };
}

PoolSetter SetDuration(std::function<absl::Duration&(core::NodePool&, PoolTimings&)> field) {
  return [field](absl::string_view value, core::NodePool& pool, PoolTimings& timings) {
    absl::StatusOr<absl::Duration> d = Duration(value);
    if (!d.ok()) return d.status();
    field(pool, timings) = *d;
    return absl::OkStatus();
  };
}

const std::vector<std::pair<std::string, PoolSetter>>& PoolSetters() {
  static const auto* kSetters = new std::vector<std::pair<std::string, PoolSetter>>{
      {"warm_buffer",
       [](absl::string_view value, core::NodePool& pool, PoolTimings&) -> absl::Status {
         absl::StatusOr<int> n = WholeNumber(value);
         if (!n.ok()) return n.status();
         pool.warm_buffer = core::WarmBuffer::Constant(*n);
         return absl::OkStatus();
       }},
      {"min_size", SetCount(&core::NodePool::min_size)},
      {"max_size", SetCount(&core::NodePool::max_size)},
      {"scale_down.unneeded",
       SetDuration([](core::NodePool& p, PoolTimings&) -> absl::Duration& {
         return p.scale_down.unneeded;
       })},
      {"scale_down.delay_after_add",
       SetDuration([](core::NodePool& p, PoolTimings&) -> absl::Duration& {
         return p.scale_down.delay_after_add;
       })},
      {"scale_down.schedule",
       [](absl::string_view value, core::NodePool& pool, PoolTimings&) -> absl::Status {
         if (value != "none") {
           return absl::InvalidArgumentError(absl::StrCat(
               "the only value is \"none\" (scale down at any time), not \"", value, "\""));
         }
         pool.scale_down.schedule = {};
         return absl::OkStatus();
       }},
      {"max_node_provision_time",
       SetDuration([](core::NodePool& p, PoolTimings&) -> absl::Duration& {
         return p.max_node_provision_time;
       })},
      {"node_start", SetDuration([](core::NodePool&, PoolTimings& t) -> absl::Duration& {
         return t.node_start;
       })},
      {"driver_install", SetDuration([](core::NodePool&, PoolTimings& t) -> absl::Duration& {
         return t.driver_install;
       })},
      {"mig.layout",
       [](absl::string_view value, core::NodePool& pool, PoolTimings&) -> absl::Status {
         std::optional<core::MigLayoutKind> kind = core::ParseMigLayoutKind(value);
         if (!kind) {
           return absl::InvalidArgumentError(
               absl::StrCat("want whole, fixed or by_demand, not \"", value, "\""));
         }
         pool.mig.kind = *kind;
         return absl::OkStatus();
       }},
      // Slash-separated: a comma ends a variant's setting.
      {"mig.profiles",
       [](absl::string_view value, core::NodePool& pool, PoolTimings&) -> absl::Status {
         pool.mig.profiles.clear();
         if (value.empty()) return absl::OkStatus();
         for (absl::string_view profile : absl::StrSplit(value, '/')) {
           pool.mig.profiles.emplace_back(absl::StripAsciiWhitespace(profile));
         }
         return absl::OkStatus();
       }},
      {"mig_relayout", SetDuration([](core::NodePool&, PoolTimings& t) -> absl::Duration& {
         return t.mig_relayout;
       })},
  };
  return *kSetters;
}

std::string SettableKeys() {
  std::vector<std::string> keys;
  for (const auto& [key, setter] : PoolSetters()) keys.push_back(absl::StrCat("pool.<id>.", key));
  keys.push_back("batching_window");
  for (const char* key : {"gpu_hours_limit", "limit_period", "limit_action", "stop_warning"}) {
    keys.push_back(absl::StrCat("org.<id>.", key));
  }
  keys.push_back("budget_interval");
  return absl::StrJoin(keys, ", ");
}

absl::Status ApplyPoolSetting(absl::string_view origin, absl::string_view setting,
                              absl::string_view pool_id, absl::string_view key,
                              absl::string_view value, Scenario& scenario) {
  core::Catalog& catalog = scenario.input.catalog;
  core::NodePool* pool = nullptr;
  for (core::NodePool& p : catalog.pools) {
    if (p.id == pool_id) pool = &p;
  }
  if (pool == nullptr) {
    std::vector<std::string> ids;
    for (const core::NodePool& p : catalog.pools) ids.push_back(p.id);
    return Refuse(origin, setting,
                  absl::StrCat("no pool \"", pool_id, "\" in the catalog (pools: ",
                               absl::StrJoin(ids, ", "), ")"));
  }
  for (const auto& [name, setter] : PoolSetters()) {
    if (name != key) continue;
    core::NodePool changed = *pool;
    auto known = scenario.input.timings.find(pool->id);
    PoolTimings timings = known == scenario.input.timings.end() ? PoolTimings() : known->second;
    if (absl::Status s = setter(value, changed, timings); !s.ok()) {
      return Refuse(origin, setting, absl::StrCat(key, ": ", s.message()));
    }
    if (absl::StartsWith(key, "mig.")) {
      // The catalog's own rules for a pool's layout (a profile of the pool's
      // model, a legal layout, profiles with fixed and not with whole).
      catalog::Diagnostics diagnostics;
      catalog::CheckPoolMig(absl::StrCat("pool ", changed.id), changed, diagnostics);
      if (!diagnostics.ok()) return Refuse(origin, setting, diagnostics.errors().front());
    }
    if (changed.min_size > changed.max_size) {
      return Refuse(origin, setting,
                    absl::StrCat("min_size ", changed.min_size, " is above max_size ",
                                 changed.max_size));
    }
    if (key == "node_start") timings.node_start_source = absl::StrCat(origin, " ", setting);
    if (key == "driver_install") timings.driver_install_source = absl::StrCat(origin, " ", setting);
    *pool = std::move(changed);
    scenario.input.timings[pool->id] = std::move(timings);
    return absl::OkStatus();
  }
  return Refuse(origin, setting,
                absl::StrCat("unknown setting \"", key, "\" (settable: ", SettableKeys(), ")"));
}

// One setting of an org's spending limit (`key` after "org.<id>."), into
// `limit`; the limit's own rules are checked by the caller.
absl::Status SetLimit(absl::string_view key, absl::string_view value, core::SpendingLimit& limit) {
  if (key == "gpu_hours_limit") {
    double hours;
    if (!absl::SimpleAtod(value, &hours)) {
      return absl::InvalidArgumentError(absl::StrCat("want GPU-hours such as 100 or 0.5, not \"",
                                                     value, "\""));
    }
    limit.gpu_hours = hours;
  } else if (key == "limit_period") {
    if (value == "month" || absl::StartsWith(value, "month:")) {
      limit.period = {.kind = core::SpendingPeriod::Kind::kCalendarMonth,
                      .time_zone = value == "month" ? "UTC" : std::string(value.substr(6))};
    } else {
      absl::StatusOr<absl::Duration> d = Duration(value);
      if (!d.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "want month, month:<time zone> such as month:Europe/Berlin, or a rolling window "
            "such as 24h or 168h, not \"", value, "\""));
      }
      limit.period = {.kind = core::SpendingPeriod::Kind::kRolling, .rolling = *d};
    }
  } else if (key == "limit_action") {
    if (value == "block_new") {
      limit.action = core::SpendingAction::kBlockNew;
    } else if (value == "block_and_stop") {
      limit.action = core::SpendingAction::kBlockAndStop;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("want block_new or block_and_stop, not \"", value, "\""));
    }
  } else if (key == "stop_warning") {
    absl::StatusOr<absl::Duration> d = Duration(value);
    if (!d.ok()) return d.status();
    limit.stop_warning = *d;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown setting \"", key, "\""));
  }
  return absl::OkStatus();
}

absl::Status ApplyOrgSetting(absl::string_view origin, absl::string_view setting,
                             absl::string_view org, absl::string_view key,
                             absl::string_view value, Scenario& scenario) {
  auto& limits = scenario.input.org_limits;
  auto known = limits.find(std::string(org));
  if (known == limits.end() && key != "gpu_hours_limit") {
    return Refuse(origin, setting,
                  absl::StrCat("org ", org, " has no limit yet: set org.", org,
                               ".gpu_hours_limit first"));
  }
  core::SpendingLimit changed = known == limits.end() ? core::SpendingLimit() : known->second;
  if (absl::Status s = SetLimit(key, value, changed); !s.ok()) {
    return Refuse(origin, setting,
                  absl::StrCat(key, ": ", s.message(), " (settable: ", SettableKeys(), ")"));
  }
  // The server's rules for a limit (core/spending_limit.h), with the
  // setting's path: "org.acme: gpu_hours: ...".
  std::vector<std::string> problems =
      core::SpendingLimitProblems(changed, absl::StrCat("org.", org));
  if (!problems.empty()) return Refuse(origin, setting, problems.front());
  limits[std::string(org)] = std::move(changed);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VariantSpec> ParseVariant(absl::string_view text) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--variant ", text, ": want NAME:SETTING,... such as wb2:pool.gpu-h100.warm_buffer=2"));
  }
  VariantSpec spec;
  spec.name = std::string(text.substr(0, colon));
  bool valid = !spec.name.empty() && spec.name.size() <= 40 && absl::ascii_isalnum(spec.name[0]);
  for (char c : spec.name) {
    valid = valid && (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '.' || c == '_' ||
                      c == '-');
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--variant ", text, ": the name \"", spec.name,
        "\" must be 1-40 of a-z, 0-9, '.', '_', '-', starting with a letter or digit"));
  }
  for (absl::string_view setting : absl::StrSplit(text.substr(colon + 1), ',', absl::SkipEmpty())) {
    spec.settings.emplace_back(absl::StripAsciiWhitespace(setting));
  }
  return spec;
}

absl::Status ApplySetting(absl::string_view origin, absl::string_view setting, Scenario& scenario) {
  const size_t equals = setting.find('=');
  if (equals == absl::string_view::npos) {
    return Refuse(origin, setting, absl::StrCat("want KEY=VALUE (keys: ", SettableKeys(), ")"));
  }
  absl::string_view key = setting.substr(0, equals);
  absl::string_view value = setting.substr(equals + 1);
  if (key == "batching_window") {
    absl::StatusOr<absl::Duration> d = Duration(value);
    if (!d.ok()) return Refuse(origin, setting, absl::StrCat("batching_window: ", d.status().message()));
    scenario.input.options.batching_window = *d;
    return absl::OkStatus();
  }
  if (key == "budget_interval") {
    absl::StatusOr<absl::Duration> d = Duration(value);
    if (!d.ok()) return Refuse(origin, setting, absl::StrCat("budget_interval: ", d.status().message()));
    scenario.input.options.budget_interval = *d;
    return absl::OkStatus();
  }
  std::vector<absl::string_view> parts = absl::StrSplit(key, absl::MaxSplits('.', 2));
  if (parts.size() == 3 && parts[0] == "org" && !parts[1].empty()) {
    return ApplyOrgSetting(origin, setting, parts[1], parts[2], value, scenario);
  }
  if (parts.size() != 3 || parts[0] != "pool" || parts[1].empty()) {
    return Refuse(origin, setting,
                  absl::StrCat("unknown setting \"", key, "\" (settable: ", SettableKeys(), ")"));
  }
  return ApplyPoolSetting(origin, setting, parts[1], parts[2], value, scenario);
}

absl::StatusOr<Scenario> WithSettings(const Scenario& base, std::string name,
                                      const std::vector<std::string>& settings,
                                      absl::string_view origin) {
  Scenario scenario = base;
  scenario.name = std::move(name);
  for (const std::string& setting : settings) {
    if (absl::Status s = ApplySetting(origin, setting, scenario); !s.ok()) return s;
    scenario.settings.push_back(setting);
  }
  return scenario;
}

}  // namespace wsched::simulate
