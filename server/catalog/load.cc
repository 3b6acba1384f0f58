#include "server/catalog/load.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/catalog/parse.h"
#include "server/catalog/validate.h"

namespace wsched::catalog {
namespace {

namespace fs = std::filesystem;

// A directory is a handful of files; a thousand means a wrong path.
constexpr size_t kMaxCatalogFiles = 256;

bool IsCatalogFileName(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::string extension = path.extension().string();
  return !name.empty() && name[0] != '.' && (extension == ".yaml" || extension == ".yml");
}

// Reads a whole file, refusing ones too large to be a catalog before
// loading them into memory.
absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return absl::NotFoundError(absl::StrCat("cannot read: ", error.message()));
  if (size > kMaxCatalogTextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("is ", size, " bytes; the limit is ", kMaxCatalogTextBytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError("read failed");
  return text.str();
}

// The files a path stands for, sorted so merges and error paths are stable.
absl::StatusOr<std::vector<fs::path>> CatalogFiles(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return absl::NotFoundError("no such file or directory");
  if (!fs::is_directory(status)) return std::vector<fs::path>{path};
  std::vector<fs::path> files;
  for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error) && IsCatalogFileName(it->path())) files.push_back(it->path());
    if (files.size() > kMaxCatalogFiles) {
      return absl::InvalidArgumentError(
          absl::StrCat("holds more than ", kMaxCatalogFiles, " catalog files"));
    }
  }
  if (error) return absl::NotFoundError(absl::StrCat("cannot list: ", error.message()));
  if (files.empty()) return absl::InvalidArgumentError("holds no *.yaml or *.yml files");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

CatalogCheck CheckCatalogText(absl::string_view yaml_text, const ValidationOptions& options) {
  core::Catalog catalog;
  CatalogSources sources;
  Diagnostics diagnostics;
  ReadCatalogYaml(yaml_text, /*file=*/"", catalog, sources, diagnostics);
  ValidateCatalog(catalog, sources, diagnostics, options);
  CatalogCheck check = ToCheck(std::move(catalog), diagnostics);
  check.rules = options;
  return check;
}

absl::StatusOr<core::Catalog> ParseCatalog(absl::string_view yaml_text,
                                           const ValidationOptions& options) {
  CatalogCheck check = CheckCatalogText(yaml_text, options);
  if (absl::Status status = CheckStatus(check); !status.ok()) return status;
  return std::move(check.catalog);
}

CatalogCheck CheckCatalogPath(const std::string& path, const ValidationOptions& options) {
  core::Catalog catalog;
  CatalogSources sources;
  Diagnostics diagnostics;
  absl::StatusOr<std::vector<fs::path>> files = CatalogFiles(path);
  if (!files.ok()) {
    diagnostics.ParseError(path, files.status().message());
    return ToCheck(std::move(catalog), diagnostics);
  }
  // A single file reads exactly like its text; only directory merges need
  // the file name to tell elements apart.
  const bool name_files = fs::is_directory(path);
  for (const fs::path& file : *files) {
    const std::string label = name_files ? file.filename().string() : "";
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) {
      diagnostics.ParseError(file.string(), text.status().message());
      for (absl::string_view list : {"classes", "pools", "driver_policy"})
        diagnostics.MarkIncomplete(list);
      continue;
    }
    ReadCatalogYaml(*text, label, catalog, sources, diagnostics);
  }
  ValidateCatalog(catalog, sources, diagnostics, options);
  CatalogCheck check = ToCheck(std::move(catalog), diagnostics);
  check.rules = options;
  return check;
}

absl::StatusOr<core::Catalog> LoadCatalog(const std::string& path,
                                          const ValidationOptions& options) {
  std::error_code error;
  if (!fs::exists(path, error))
    return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
  CatalogCheck check = CheckCatalogPath(path, options);
  if (absl::Status status = CheckStatus(check); !status.ok()) return status;
  return std::move(check.catalog);
}

}  // namespace wsched::catalog
