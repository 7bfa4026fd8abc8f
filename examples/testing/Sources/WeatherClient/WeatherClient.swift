public import CourierKit
internal import Foundation

/// Today's weather in a city, as the API sends it.
public struct Forecast: Decodable, Equatable, Sendable {
    public var city: String
    public var celsius: Double

    public init(city: String, celsius: Double) {
        self.city = city
        self.celsius = celsius
    }
}

/// Why a forecast could not be had.
public enum WeatherError: Error, Equatable, Sendable {
    /// The API answered with this status after the policy's retries.
    case status(Int)
    /// The body was not a forecast.
    case invalidBody
}

/// A tiny client for a weather API: one method per endpoint; every request goes through a data loader whose policy
/// (`weather-policy.yaml`, a resource of this target) decides the rate limit, the retries and their back-off,
/// Retry-After and the OAuth2 token. The app passes the configuration, so that its tests can pass one that answers
/// from a script and waits on a manual clock.
public final class WeatherClient: Sendable {
    private let service: DataLoaderService
    private let loader: DataLoader
    private let baseURL: String

    /// - Parameter configuration: the service's configuration (its environment holds `WEATHER_REFRESH_TOKEN`).
    public init(configuration: DataLoaderService.Configuration, baseURL: String = "https://api.weather.example") throws {
        guard let policy = Bundle.module.path(forResource: "weather-policy", ofType: "yaml") else {
            throw WeatherError.invalidBody
        }
        service = try DataLoaderService(policyFile: policy, configuration: configuration)
        loader = service.makeFactory().makeLoader()
        self.baseURL = baseURL
    }

    /// Today's forecast for `city`.
    public func forecast(for city: String) async throws -> Forecast {
        let query = city.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? city
        let response = try await forecastResponse(for: query)
        guard response.status == 200 else { throw WeatherError.status(response.status) }
        do {
            return try JSONDecoder().decode(Forecast.self, from: Data(response.body))
        } catch {
            throw WeatherError.invalidBody
        }
    }

    /// The whole response, report included, for callers (and tests) that want to know what the policy did.
    public func forecastResponse(for city: String) async throws -> Response {
        try await loader.load(Request(url: "\(baseURL)/v1/forecast?city=\(city)"))
    }

    /// Ends the service's work.
    public func shutdown() async {
        await service.shutdown()
    }
}
