#include "server/cli/arg_parser.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/cli/duration_flag.h"
#include "server/cli/flag_table.h"

namespace wsched::cli {
namespace {

// One flag word after it was matched against the table.
struct FlagWord {
  const FlagSpec* spec = nullptr;
  std::optional<std::string> value;  // "=VALUE" or the rest of "-oVALUE".
  bool negated = false;              // "--no-dry-run".
};

absl::StatusOr<FlagWord> Identify(const std::string& arg) {
  const bool long_form = arg.rfind("--", 0) == 0;
  std::string_view body = std::string_view(arg).substr(long_form ? 2 : 1);
  const size_t equals = body.find('=');
  const std::string name = CanonicalFlagName(body.substr(0, equals));
  FlagWord word;
  if (equals != std::string_view::npos) word.value = std::string(body.substr(equals + 1));
  if ((word.spec = FindFlag(name)) != nullptr) return word;
  // "--no-X" / "--noX" for a bool X (absl's spelling, kept for old scripts).
  if (name.rfind("no", 0) == 0 && !word.value.has_value()) {
    std::string rest = name.substr(2);
    if (!rest.empty() && rest[0] == '_') rest.erase(0, 1);
    const FlagSpec* spec = FindFlag(rest);
    if (spec != nullptr && spec->kind == FlagKind::kBool) {
      word.spec = spec;
      word.negated = true;
      return word;
    }
  }
  if (!long_form && (word.spec = FindShortFlag(body[0])) != nullptr) {
    std::string_view rest = body.substr(1);
    if (!rest.empty() && rest[0] == '=') rest.remove_prefix(1);
    word.value = rest.empty() ? std::nullopt : std::optional<std::string>(rest);
    return word;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
}

absl::StatusOr<std::string> BoolValue(const std::string& arg, const std::string& text) {
  std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "1" || lower == "yes") return std::string("true");
  if (lower == "false" || lower == "0" || lower == "no") return std::string("false");
  return absl::InvalidArgumentError(absl::StrCat(arg, ": want true or false, not \"", text, "\""));
}

absl::Status CheckKind(const FlagSpec& spec, const std::string& arg, const std::string& value) {
  if (spec.kind == FlagKind::kInt) {
    int64_t number;
    if (!absl::SimpleAtoi(value, &number)) {
      return absl::InvalidArgumentError(absl::StrCat(arg, ": want an integer, not \"", value, "\""));
    }
  }
  if (spec.kind == FlagKind::kDuration) return ParseDurationFlag(value).status();
  return absl::OkStatus();
}

}  // namespace

std::string ParsedArgs::Get(std::string_view name) const {
  auto it = flags.find(name);
  return it == flags.end() ? "" : it->second;
}

bool ParsedArgs::GetBool(std::string_view name) const { return Get(name) == "true"; }

std::vector<std::string> ParsedArgs::GetAll(std::string_view name) const {
  auto it = all.find(name);
  return it == all.end() ? std::vector<std::string>() : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    // "-" alone is a word (stdin), as is anything not starting with '-'.
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    absl::StatusOr<FlagWord> word = Identify(arg);
    if (!word.ok()) return word.status();
    const FlagSpec& spec = *word->spec;
    std::string value;
    if (spec.kind == FlagKind::kBool) {
      if (word->negated) {
        value = "false";
      } else if (word->value.has_value()) {
        absl::StatusOr<std::string> parsed_bool = BoolValue(arg, *word->value);
        if (!parsed_bool.ok()) return parsed_bool.status();
        value = *parsed_bool;
      } else {
        value = "true";
      }
    } else if (word->value.has_value()) {
      value = *word->value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("flag ", arg, " needs a value"));
    }
    if (absl::Status status = CheckKind(spec, arg, value); !status.ok()) return status;
    parsed.flags[std::string(spec.name)] = value;
    parsed.all[std::string(spec.name)].push_back(value);
  }
  return parsed;
}

}  // namespace wsched::cli
