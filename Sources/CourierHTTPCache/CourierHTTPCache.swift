// CourierHTTPCache: a private HTTP cache (RFC 9111) on top of CourierCache's record store. Pure rules (what may be
// stored, how fresh a response is, how to revalidate it) and the stored-response format; the data loader
// performs them (lookup before the rate limit, store and revalidation after the response).
