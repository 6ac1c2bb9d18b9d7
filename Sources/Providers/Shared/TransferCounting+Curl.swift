import Curl
import FavFSCore

extension TransferCounting {
    /// Lets every curl transfer count its body bytes for the transfer the calling task counts
    /// (`TransferCounting.current`: an upload or download of the domain), so `favfs status`
    /// shows bytes and rates whatever the protocol. Once per process, before transfers start.
    public static func countCurlTransfers() {
        CurlByteCounting.install {
            guard let counter = TransferCounting.current else { return nil }
            return { counter.add($0) }
        }
    }
}
