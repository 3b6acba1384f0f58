// A GPU's MIG state and links (core/mig.h) inside a node's stored info
// (node_document.cc), in the proto3 JSON shape of wsched.v1.GpuMig/GpuLink.
#ifndef WSCHED_SERVER_STORE_DOCUMENTS_MIG_DOCUMENT_H_
#define WSCHED_SERVER_STORE_DOCUMENTS_MIG_DOCUMENT_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/mig.h"
#include "server/store/documents/fields.h"

namespace wsched::store::documents {

nlohmann::json GpuMigJson(const core::GpuMig& mig);
core::GpuMig ReadGpuMig(Fields& mig);
nlohmann::json GpuLinksJson(const std::vector<core::GpuLink>& links);
// A missing link kind reads as sys, the weakest: never as NVLink.
std::vector<core::GpuLink> ReadGpuLinks(Fields& gpu, const char* key);

}  // namespace wsched::store::documents

#endif  // WSCHED_SERVER_STORE_DOCUMENTS_MIG_DOCUMENT_H_
