public import Foundation

/// Where the package keeps its policy: an app hands this file to `DataLoaderService(policyFile:configuration:)`. The file was
/// linted when the package was built, so a policy error never reaches run time.
public enum PartnerPolicy {
    /// `policies/partner.yaml` among the target's resources.
    public static var file: URL? {
        Bundle.module.url(forResource: "partner", withExtension: "yaml", subdirectory: "policies")
    }
}
