#include "server/core/cdi_names.h"

#include <string>

#include "gtest/gtest.h"

namespace wsched::core {
namespace {

TEST(CdiNames, KindsFollowVendorAndClassRules) {
  EXPECT_TRUE(IsCdiKind(kWschedGpuKind));
  EXPECT_TRUE(IsCdiKind(kNvidiaGpuKind));
  EXPECT_FALSE(IsCdiKind("nvidia.com"));       // No class.
  EXPECT_FALSE(IsCdiKind("1vendor.com/gpu"));  // Vendor must start with a letter.
  EXPECT_FALSE(IsCdiKind("vendor.com/g.pu"));  // No '.' in a class.
  EXPECT_FALSE(IsCdiKind("vendor.com/gpu-"));  // Must end alphanumeric.
}

TEST(CdiNames, QualifiedNamesTakeNvidiaUuidsAndIndices) {
  EXPECT_TRUE(IsCdiQualifiedName("wsched.io/gpu=GPU-1f0b7c9e-4a2d-4e35-8b61-0c9a7d3e2f10"));
  EXPECT_TRUE(IsCdiQualifiedName("nvidia.com/gpu=0"));
  EXPECT_TRUE(IsCdiQualifiedName("wsched.io/device=fuse"));
  EXPECT_FALSE(IsCdiQualifiedName("wsched.io/gpu"));
  EXPECT_FALSE(IsCdiQualifiedName("wsched.io/gpu="));
  EXPECT_FALSE(IsCdiQualifiedName("wsched.io/gpu=GPU 1"));
  EXPECT_FALSE(IsCdiQualifiedName("wsched.io/gpu=-x"));
  EXPECT_FALSE(IsCdiQualifiedName("wsched.io/gpu=" + std::string(300, 'a')));
}

TEST(CdiNames, AnnotationKeyFollowsTheKubernetesRules) {
  EXPECT_EQ(*CdiAnnotationKey("wsched", "workspace"), "cdi.k8s.io/wsched_workspace");
  // '/' in a device id becomes '_', as CDI's own helper does.
  EXPECT_EQ(*CdiAnnotationKey("wsched", "gpu/0"), "cdi.k8s.io/wsched_gpu_0");
  // 6 + 1 + 56 = 63 characters is the limit.
  EXPECT_TRUE(CdiAnnotationKey("wsched", std::string(56, 'a')).ok());
  absl::StatusOr<std::string> too_long = CdiAnnotationKey("wsched", std::string(57, 'a'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("64 characters; at most 63"), std::string::npos)
      << too_long.status();
  EXPECT_FALSE(CdiAnnotationKey("wsched", "ws=1").ok());
  EXPECT_FALSE(CdiAnnotationKey("wsched", "ws-").ok());
  EXPECT_FALSE(CdiAnnotationKey("", "ws").ok());
  EXPECT_FALSE(CdiAnnotationKey("wsched", "").ok());
}

TEST(CdiNames, AnnotationValueJoinsQualifiedNames) {
  EXPECT_EQ(*CdiAnnotationValue({"wsched.io/gpu=GPU-a", "wsched.io/device=fuse"}),
            "wsched.io/gpu=GPU-a,wsched.io/device=fuse");
  EXPECT_FALSE(CdiAnnotationValue({}).ok());
  EXPECT_FALSE(CdiAnnotationValue({"GPU-a"}).ok());
}

}  // namespace
}  // namespace wsched::core
