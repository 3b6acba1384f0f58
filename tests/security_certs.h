// A throwaway certificate authority for TLS tests, made with the openssl
// command line at test time (nothing secret is checked in).
#ifndef WSCHED_TESTS_SECURITY_CERTS_H_
#define WSCHED_TESTS_SECURITY_CERTS_H_

#include <string>

namespace wsched::testing {

struct IssuedCert {
  std::string cert;  // PEM file paths.
  std::string key;
};

class TestCa {
 public:
  // A new CA (EC P-256) in a fresh temporary directory; fails the test
  // when openssl is missing.
  explicit TestCa(const std::string& name);
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  const std::string& ca_cert() const { return ca_cert_; }

  // A certificate signed by this CA with subject CN `cn` and the given
  // subjectAltName list ("DNS:a.example,IP:127.0.0.1"; empty = none),
  // written as <dir>/<file>.crt and .key.
  IssuedCert Issue(const std::string& file, const std::string& cn, const std::string& sans);

 private:
  bool Run(const std::string& command);

  bool ok_ = false;
  std::string dir_;
  std::string ca_cert_;
  std::string ca_key_;
};

// Reads a whole file ("" when missing).
std::string ReadWholeFile(const std::string& path);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SECURITY_CERTS_H_
