#include "tests/security_certs.h"

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace wsched::testing {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TestCa::TestCa(const std::string& name) {
  char pattern[] = "/tmp/wsched-pki-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return;
  }
  dir_ = pattern;
  ca_cert_ = dir_ + "/ca.crt";
  ca_key_ = dir_ + "/ca.key";
  ok_ = Run(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 ",
                         "-nodes -days 2 -subj '/CN=", name, "' -keyout ", ca_key_, " -out ",
                         ca_cert_, " -addext basicConstraints=critical,CA:TRUE ",
                         "-addext keyUsage=critical,keyCertSign,cRLSign"));
}

bool TestCa::Run(const std::string& command) {
  std::string full = absl::StrCat(command, " >>", dir_, "/openssl.log 2>&1");
  if (std::system(full.c_str()) != 0) {
    ADD_FAILURE() << "openssl failed (is it installed? deploy/local/install-deps.sh): " << command
                  << "\n" << ReadWholeFile(dir_ + "/openssl.log");
    return false;
  }
  return true;
}

IssuedCert TestCa::Issue(const std::string& file, const std::string& cn, const std::string& sans) {
  IssuedCert out{absl::StrCat(dir_, "/", file, ".crt"), absl::StrCat(dir_, "/", file, ".key")};
  std::string csr = absl::StrCat(dir_, "/", file, ".csr");
  std::string ext = absl::StrCat(dir_, "/", file, ".ext");
  std::ofstream(ext) << "basicConstraints=CA:FALSE\n"
                     << "keyUsage=critical,digitalSignature,keyEncipherment\n"
                     << "extendedKeyUsage=serverAuth,clientAuth\n"
                     << (sans.empty() ? "" : absl::StrCat("subjectAltName=", sans, "\n"));
  ok_ = ok_ &&
        Run(absl::StrCat("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 ",
                         "-nodes -subj '/CN=", cn, "' -keyout ", out.key, " -out ", csr)) &&
        Run(absl::StrCat("openssl x509 -req -in ", csr, " -CA ", ca_cert_, " -CAkey ", ca_key_,
                         " -CAcreateserial -days 2 -extfile ", ext, " -out ", out.cert));
  return out;
}

}  // namespace wsched::testing
