#include "server/agent/nvidia_topology.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::agent {
namespace {

// More GPUs than any node has; bounds the matrix a broken nvidia-smi could
// make the agent allocate.
constexpr int kMaxGpus = 256;
// NVSwitch systems bond 18 links per GPU; anything far past it is junk.
constexpr int kMaxNvlinks = 64;

absl::Status LineError(int line_number, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("nvidia-smi topo -m line ", line_number, ": ", problem));
}

// On a terminal nvidia-smi underlines the header ("\x1b[4mGPU0\t...\x1b[0m").
// Only SGR sequences (ESC [ digits and ';' m) are removed; any other escape
// stays and makes the header fail to parse.
std::string StripSgr(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t end = i + 2;
      while (end < text.size() && (absl::ascii_isdigit(text[end]) || text[end] == ';')) ++end;
      if (end < text.size() && text[end] == 'm') {
        i = end + 1;
        continue;
      }
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

std::vector<absl::string_view> Tokens(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
}

// "GPU3" -> 3; nullopt for anything else ("GPU", "GPU NUMA ID", "NIC0").
std::optional<int> GpuNumber(absl::string_view token) {
  int number = 0;
  if (!absl::ConsumePrefix(&token, "GPU") || token.empty() || !absl::ascii_isdigit(token.front()) ||
      !absl::SimpleAtoi(token, &number) || number < 0) {
    return std::nullopt;
  }
  return number;
}

absl::StatusOr<core::GpuLink> ParseCell(absl::string_view cell) {
  if (absl::string_view count = cell; absl::ConsumePrefix(&count, "NV")) {
    int links = 0;
    if (count.empty() || !absl::ascii_isdigit(count.front()) || !absl::SimpleAtoi(count, &links) ||
        links < 1 || links > kMaxNvlinks) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", cell, "\" is not NV<bonded links, 1..", kMaxNvlinks, ">"));
    }
    return core::GpuLink{.kind = core::GpuLinkKind::kNvlink, .nvlinks = links};
  }
  const struct {
    const char* cell;
    core::GpuLinkKind kind;
  } kPcie[] = {{"PIX", core::GpuLinkKind::kPix},
               {"PXB", core::GpuLinkKind::kPxb},
               {"PHB", core::GpuLinkKind::kPhb},
               {"NODE", core::GpuLinkKind::kNode},
               {"SYS", core::GpuLinkKind::kSys}};
  for (const auto& known : kPcie) {
    if (cell == known.cell) return core::GpuLink{.kind = known.kind};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", cell, "\" is not X, NV#, PIX, PXB, PHB, NODE or SYS"));
}

// The header's GPU columns: GPU0, GPU1, ... in order, before anything else.
absl::StatusOr<int> GpuColumns(int line_number, const std::vector<absl::string_view>& header) {
  int columns = 0;
  for (absl::string_view token : header) {
    std::optional<int> gpu = GpuNumber(token);
    if (!gpu) break;
    if (*gpu != columns) {
      return LineError(line_number, absl::StrCat("column ", token, " where GPU", columns,
                                                 " belongs (GPU columns come in order)"));
    }
    if (++columns > kMaxGpus) {
      return LineError(line_number, absl::StrCat("more than ", kMaxGpus, " GPU columns"));
    }
  }
  for (size_t i = columns; i < header.size(); ++i) {
    if (GpuNumber(header[i])) {
      return LineError(line_number, absl::StrCat("column ", header[i], " after the GPU columns"));
    }
  }
  return columns;
}

using Matrix = std::vector<std::vector<core::GpuLink>>;

absl::Status ParseRow(int line_number, const std::vector<absl::string_view>& tokens, int row,
                      int columns, Matrix& matrix) {
  if (tokens.size() < static_cast<size_t>(columns) + 1) {
    return LineError(line_number, absl::StrCat(tokens[0], " has ", tokens.size() - 1,
                                               " cells, the header ", columns, " GPU columns"));
  }
  matrix.emplace_back(columns);
  for (int column = 0; column < columns; ++column) {
    absl::string_view cell = tokens[column + 1];
    const std::string where = absl::StrCat("cell GPU", row, "/GPU", column);
    if (column == row) {
      if (cell != "X") {
        return LineError(line_number, absl::StrCat(where, " is \"", cell, "\", not X (self)"));
      }
      continue;
    }
    if (cell == "X")
      return LineError(line_number, absl::StrCat(where, " is X (self) off the diagonal"));
    absl::StatusOr<core::GpuLink> link = ParseCell(cell);
    if (!link.ok())
      return LineError(line_number, absl::StrCat(where, ": ", link.status().message()));
    link->peer = column;
    matrix[row][column] = *link;
  }
  return absl::OkStatus();
}

// The cell as nvidia-smi prints it: "NV18", "SYS".
std::string CellText(const core::GpuLink& link) {
  if (link.kind == core::GpuLinkKind::kNvlink) return absl::StrCat("NV", link.nvlinks);
  return absl::AsciiStrToUpper(core::GpuLinkKindName(link.kind));
}

absl::Status CheckSymmetric(const Matrix& matrix) {
  for (size_t row = 0; row < matrix.size(); ++row) {
    for (size_t column = row + 1; column < matrix.size(); ++column) {
      const core::GpuLink& there = matrix[row][column];
      const core::GpuLink& back = matrix[column][row];
      if (there.kind != back.kind || there.nvlinks != back.nvlinks) {
        return absl::InvalidArgumentError(
            absl::StrCat("nvidia-smi topo -m: cell GPU", column, "/GPU", row, " (", CellText(back),
                         ") disagrees with GPU", row, "/GPU", column, " (", CellText(there), ")"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> ParseNvidiaSmiTopology(
    absl::string_view text) {
  const std::string clean = StripSgr(text);
  int columns = -1;  // Until the header is found.
  Matrix matrix;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(clean, '\n')) {
    ++line_number;
    std::vector<absl::string_view> tokens = Tokens(line);
    if (tokens.empty()) continue;
    // "Legend:" and "NIC Legend:" end the matrix.
    if (absl::StartsWith(tokens[0], "Legend") ||
        (tokens[0] == "NIC" && tokens.size() > 1 && absl::StartsWith(tokens[1], "Legend"))) {
      break;
    }
    if (columns < 0) {
      if (tokens[0] != "GPU0") {
        return LineError(line_number, "expected the header row (GPU0 GPU1 ...) first");
      }
      absl::StatusOr<int> header = GpuColumns(line_number, tokens);
      if (!header.ok()) return header.status();
      columns = *header;
      continue;
    }
    std::optional<int> row = GpuNumber(tokens[0]);
    if (!row) continue;  // A NIC row.
    if (*row != static_cast<int>(matrix.size())) {
      return LineError(line_number, absl::StrCat("row ", tokens[0], " where GPU", matrix.size(),
                                                 " belongs (GPU rows come in order)"));
    }
    if (*row >= columns) {
      return LineError(line_number, absl::StrCat("row ", tokens[0], " but only ", columns,
                                                 " GPU columns: the matrix is not square"));
    }
    if (absl::Status status = ParseRow(line_number, tokens, *row, columns, matrix); !status.ok()) {
      return status;
    }
  }
  if (columns < 0) return absl::InvalidArgumentError("nvidia-smi topo -m: no header row");
  if (static_cast<int>(matrix.size()) != columns) {
    return absl::InvalidArgumentError(absl::StrCat("nvidia-smi topo -m: ", columns,
                                                   " GPU columns but ", matrix.size(),
                                                   " GPU rows: the matrix is not square"));
  }
  if (absl::Status status = CheckSymmetric(matrix); !status.ok()) return status;
  std::map<int, std::vector<core::GpuLink>> links;
  for (int row = 0; row < columns; ++row) {
    std::vector<core::GpuLink>& peers = links[row];
    for (int column = 0; column < columns; ++column) {
      if (column != row) peers.push_back(matrix[row][column]);
    }
  }
  return links;
}

}  // namespace wsched::agent
