// Writing the warm-buffer and scale-down schedules back (schedules.h).
#include <string>
#include <vector>

#include "server/catalog/schedules.h"
#include "server/core/time_window.h"

namespace wsched::catalog {
namespace {

void Key(YAML::Emitter& out, const char* key) { out << YAML::Key << key << YAML::Value; }

// Times are quoted: YAML 1.1 readers take an unquoted 08:00 for a number.
void Time(YAML::Emitter& out, const char* key, int minutes) {
  Key(out, key);
  out << YAML::DoubleQuoted << core::FormatTimeOfDay(minutes);
}

// The keys a window shares; the caller adds its value and closes the map.
void BeginWindow(YAML::Emitter& out, const core::TimeWindow& when) {
  out << YAML::Flow << YAML::BeginMap;
  if (!when.days.empty()) {
    Key(out, "days");
    out << YAML::Flow << YAML::BeginSeq;
    for (const std::string& entry : core::FormatDays(when.days)) out << entry;
    out << YAML::EndSeq;
  }
  Time(out, "from", when.start_minute);
  Time(out, "to", when.end_minute);
}

void TimeZone(YAML::Emitter& out, const std::string& time_zone) {
  if (time_zone.empty()) return;
  Key(out, "time_zone");
  out << YAML::DoubleQuoted << time_zone;
}

template <typename T>
std::string OneLine(void (*emit)(YAML::Emitter&, const T&), const T& value) {
  YAML::Emitter out;
  out.SetBoolFormat(YAML::TrueFalseBool);
  out << YAML::Flow;
  emit(out, value);
  return out.c_str();
}

}  // namespace

void EmitWarmBuffer(YAML::Emitter& out, const core::WarmBuffer& buffer) {
  if (buffer.is_constant() && buffer.time_zone.empty()) {
    out << buffer.default_nodes;
    return;
  }
  out << YAML::BeginMap;
  Key(out, "default");
  out << buffer.default_nodes;
  TimeZone(out, buffer.time_zone);
  Key(out, "windows");
  out << YAML::BeginSeq;
  for (const core::WarmBufferWindow& window : buffer.windows) {
    BeginWindow(out, window.when);
    Key(out, "nodes");
    out << window.nodes;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
}

void EmitScaleDownSchedule(YAML::Emitter& out, const core::ScaleDownSchedule& schedule) {
  out << YAML::BeginMap;
  Key(out, "default");
  out << schedule.default_allow;
  TimeZone(out, schedule.time_zone);
  if (!schedule.windows.empty()) {
    Key(out, "windows");
    out << YAML::BeginSeq;
    for (const core::ScaleDownWindow& window : schedule.windows) {
      BeginWindow(out, window.when);
      Key(out, "allow");
      out << window.allow;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

std::string FormatWarmBuffer(const core::WarmBuffer& buffer) {
  return OneLine(EmitWarmBuffer, buffer);
}

std::string FormatScaleDownSchedule(const core::ScaleDownSchedule& schedule) {
  return OneLine(EmitScaleDownSchedule, schedule);
}

}  // namespace wsched::catalog
