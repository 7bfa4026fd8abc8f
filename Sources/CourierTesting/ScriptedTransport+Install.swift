internal import CourierCore
public import CourierKit

extension ScriptedTransport {
    /// Makes `configuration`'s service answer through this transport and wait on its clock: registers it in
    /// `configuration.protocols` (beside `data:`; a registry that already has a plugin for http or https traps, as
    /// ``ProtocolRegistry/register(_:)`` does) and sets `configuration.clock` to ``clock``.
    public func install(in configuration: inout DataLoaderService.Configuration) {
        configuration.protocols.register(self)
        configuration.clock = clock
    }
}
