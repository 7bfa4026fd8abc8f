internal import CourierCore

extension HTTPMethod {
    /// A method as typed on the command line (`-X`): a standard method in any case is upper-cased (`get` is
    /// `GET`), because methods are case-sensitive and servers answer `get` with 400 or 405; any other method is
    /// kept as given.
    init(commandLine text: String) {
        let upper = HTTPMethod(text.uppercased())
        self = HTTPMethod.standard.contains(upper) ? upper : HTTPMethod(text)
    }
}
