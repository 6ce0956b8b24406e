import NIOSSL

/// BoringSSL context options NIOSSL's `TLSConfiguration` has no setting for.
///
/// NIOSSL keeps its `SSL_CTX` private, so the pointer is read from the context's stored
/// property (by reflection) and the option is set through BoringSSL's own, prefixed, symbol,
/// which NIOSSL links into this binary. Both are checked: when the property is missing or the
/// option does not stick, ``disableSessionTickets(_:)`` throws instead of serving tickets
/// silently (a test checks that a client gets none).
enum BoringSSLContextOptions {
    /// `SSL_OP_NO_TICKET`: no session tickets (TLS 1.2 NewSessionTicket in the handshake, TLS 1.3
    /// post-handshake tickets).
    static let noTicket: UInt32 = 0x0000_4000

    /// Sets `SSL_OP_NO_TICKET` on `context`'s `SSL_CTX`; call before the first connection.
    static func disableSessionTickets(_ context: NIOSSLContext) throws(SimulatorError) {
        guard let pointer = sslContextPointer(context) else {
            throw .crypto("cannot turn session tickets off: this NIOSSL version keeps no SSL_CTX where expected")
        }
        let options = boringSSLSetOptions(pointer, noTicket)
        guard options & noTicket != 0 else {
            throw .crypto("cannot turn session tickets off: SSL_OP_NO_TICKET did not stick (options \(options))")
        }
    }

    static func sslContextPointer(_ context: NIOSSLContext) -> OpaquePointer? {
        for child in Mirror(reflecting: context).children where child.label == "sslContext" {
            return child.value as? OpaquePointer
        }
        return nil
    }
}

/// BoringSSL's `SSL_CTX_set_options(SSL_CTX *, uint32_t) -> uint32_t` (the new option mask), under
/// the `CNIOBoringSSL_` prefix NIOSSL builds it with. Pointer and integer arguments only, so the
/// Swift declaration calls it as C does.
@_silgen_name("CNIOBoringSSL_SSL_CTX_set_options")
private func boringSSLSetOptions(_ context: OpaquePointer, _ options: UInt32) -> UInt32
