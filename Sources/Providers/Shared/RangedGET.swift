import FavFSCore
import Curl

/// What a ranged GET wrote into the sink, for the statuses that carry content.
enum RangedGET {
    /// 206: at its Content-Range start, which must be the start asked for; 200: the whole
    /// content from offset 0 (a server that ignores Range); 416: nothing (the range starts at or
    /// past the end). nil for any other status, which is the caller's error to report.
    static func written(_ result: (response: CurlResponse, writtenAt: Int64), requested range: Range<Int64>,
                        invalid: (String) -> ProviderError) throws -> Range<Int64>? {
        let response = result.response
        switch response.status {
        case 206:
            guard result.writtenAt == range.lowerBound || response.bytesWritten == 0 else {
                throw invalid("asked for bytes from \(range.lowerBound), got Content-Range \(response.headers["content-range"] ?? "none")")
            }
            return result.writtenAt..<(result.writtenAt + response.bytesWritten)
        case 200:
            return 0..<response.bytesWritten
        case 416:
            return range.lowerBound..<range.lowerBound
        default:
            return nil
        }
    }
}
