extension CacheControl {
    /// The directives as one canonical `Cache-Control` field value: every directive that is set, in a fixed order
    /// (the order of the properties), lower case, `, ` between them; arguments in their token form, except a
    /// qualified `no-cache`'s field names, which are a quoted string (with `"` and `\` escaped). Empty when no
    /// directive is set.
    ///
    /// Parsing the description gives back an equal value, and the same description (the fuzz target
    /// `FuzzCacheHeaders` checks both). Directives Courier does not know are not kept, so they are not written.
    package var description: String {
        var directives: [String] = []
        func add(_ name: String, _ isSet: Bool) { if isSet { directives.append(name) } }
        func add(_ name: String, seconds: Int64?) { if let seconds { directives.append("\(name)=\(seconds)") } }

        add("max-age", seconds: maxAge)
        add("s-maxage", seconds: sharedMaxAge)
        add("no-store", noStore)
        if noCache {
            directives.append(noCacheFields.isEmpty ? "no-cache" : "no-cache=" + Self.quoted(noCacheFields.joined(separator: ", ")))
        }
        add("must-revalidate", mustRevalidate)
        add("proxy-revalidate", proxyRevalidate)
        add("private", isPrivate)
        add("public", isPublic)
        add("must-understand", mustUnderstand)
        add("no-transform", noTransform)
        add("immutable", immutable)
        add("stale-while-revalidate", seconds: staleWhileRevalidate)
        add("stale-if-error", seconds: staleIfError)
        switch maxStale {
        case nil: break
        case .any: directives.append("max-stale")
        case .seconds(let seconds): add("max-stale", seconds: seconds)
        }
        add("min-fresh", seconds: minFresh)
        add("only-if-cached", onlyIfCached)
        return directives.joined(separator: ", ")
    }

    /// `text` as an RFC 9110 §5.6.4 quoted-string: in double quotes, with `"` and `\` escaped by a backslash.
    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }
}
