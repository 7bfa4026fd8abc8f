import Foundation

extension ChildProcess {
    /// The port a peer prints as its `PORT n` line within 10 s. When it prints none, the peer is told to exit
    /// (its standard input closed, SIGTERM) and `failure` is thrown with what it printed.
    func printedPort(or failure: (String) -> any Error) throws -> Int {
        var transcript = ""
        let line = try PipeReader.firstLine(
            startingWith: "PORT ", in: standardOutput!, before: .now + .seconds(10), transcript: &transcript
        )
        guard let port = line.flatMap({ Int($0.dropFirst(5)) }) else {
            closeStandardInput()
            send(SIGTERM)
            throw failure(transcript)
        }
        return port
    }
}
