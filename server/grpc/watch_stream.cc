#include "server/grpc/watch_stream.h"

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api::watch_stream {

absl::Status ResumeTooOld(int64_t resume, int64_t oldest) {
  return core::ReasonError(
      absl::StrCat("resume_version ", resume,
                   " is older than the change log keeps (the oldest "
                   "version to resume from is ",
                   oldest, "); list again with resume_version 0"),
      {.reason = core::ErrorReason::kResumeTooOld,
       .metadata = {{"resume_version", absl::StrCat(resume)},
                    {"oldest_version", absl::StrCat(oldest)}}});
}

absl::Status ResumeAhead(int64_t resume, int64_t head) {
  return core::InvalidFieldError(
      "resume_version",
      absl::StrCat("must be a version this service sent; ", resume,
                   " is newer than the newest, ", head));
}

const char *EndReasonOf(const absl::Status &status) {
  std::optional<core::ErrorDetails> details = core::DetailsOf(status);
  if (details && details->reason == core::ErrorReason::kWatchTooSlow)
    return "too_slow";
  if (details && details->reason == core::ErrorReason::kResumeTooOld)
    return "resume_too_old";
  return "error";
}

grpc::ByteBuffer Concatenated(const std::vector<grpc::ByteBuffer> &messages) {
  std::vector<grpc::Slice> slices;
  for (const grpc::ByteBuffer &message : messages) {
    std::vector<grpc::Slice> parts;
    (void)message.Dump(&parts);
    slices.insert(slices.end(), parts.begin(), parts.end());
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

} // namespace wsched::grpc_api::watch_stream
