#include "server/grpc/tls_server.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <sstream>

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {
namespace {

// The certificate provider only logs a failed read and then serves nothing,
// so every file is read here first.
absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof(buffer));
  return buffer;
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;
using Cert = std::unique_ptr<X509, X509Deleter>;
using Key = std::unique_ptr<EVP_PKEY, KeyDeleter>;

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

absl::StatusOr<Cert> FirstCertificate(const std::string& pem, const std::string& path,
                                      const char* flag) {
  Bio bio = MemoryBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " holds no PEM certificate (", OpenSslError(), ")"));
  }
  return cert;
}

std::string Describe(X509* cert) {
  char subject[512];
  X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof(subject));
  Bio out(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(out.get(), X509_get0_notAfter(cert));
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return absl::StrCat(subject, ", expires ", std::string(data, static_cast<size_t>(size)));
}

absl::Status CheckIdentity(const TlsServerOptions& options) {
  auto cert_pem = ReadPem(options.cert_path, "--tls_cert");
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = ReadPem(options.key_path, "--tls_key");
  if (!key_pem.ok()) return key_pem.status();
  auto cert = FirstCertificate(*cert_pem, options.cert_path, "--tls_cert");
  if (!cert.ok()) return cert.status();
  Bio bio = MemoryBio(*key_pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_key: ", options.key_path,
                                                   " holds no unencrypted PEM private key (",
                                                   OpenSslError(), ")"));
  }
  if (X509_check_private_key(cert->get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("--tls_key: ", options.key_path,
                                                   " is not the key of the certificate in ",
                                                   options.cert_path));
  }
  return absl::OkStatus();
}

}  // namespace

bool TlsEnabled(const TlsServerOptions& options) {
  return !options.cert_path.empty() || !options.key_path.empty();
}

absl::StatusOr<std::string> DescribeCertificate(const std::string& path) {
  auto pem = ReadPem(path, "certificate");
  if (!pem.ok()) return pem.status();
  auto cert = FirstCertificate(*pem, path, "certificate");
  if (!cert.ok()) return cert.status();
  return Describe(cert->get());
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsServerOptions& options) {
  if (!TlsEnabled(options)) {
    if (!options.client_ca_path.empty() || options.require_client_cert) {
      return absl::InvalidArgumentError(
          "--tls_client_ca and --tls_require_client_cert need --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.cert_path.empty() || options.key_path.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (options.require_client_cert && options.client_ca_path.empty()) {
    return absl::InvalidArgumentError("--tls_require_client_cert needs --tls_client_ca");
  }
  if (options.reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--tls_reload_interval: must be >= 1s");
  }
  if (absl::Status s = CheckIdentity(options); !s.ok()) return s;
  if (!options.client_ca_path.empty()) {
    auto ca = ReadPem(options.client_ca_path, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    auto cert = FirstCertificate(*ca, options.client_ca_path, "--tls_client_ca");
    if (!cert.ok()) return cert.status();
  }
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      options.key_path, options.cert_path, options.client_ca_path,
      static_cast<unsigned int>(absl::ToInt64Seconds(options.reload_interval)));
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (options.client_ca_path.empty()) {
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    tls.watch_root_certs();
    tls.set_cert_request_type(options.require_client_cert
                                  ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                  : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(tls);
}

}  // namespace wsched::grpc_api
