// System OpenSSL 3 (libssl-dev): simulator certificates and device-auth signatures.
// Never import this next to swift-nio-ssl's BoringSSL in one Swift module (ARCHITECTURE.md).
#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/err.h>
#include <openssl/rand.h>
