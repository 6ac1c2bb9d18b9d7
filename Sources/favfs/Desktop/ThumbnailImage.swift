import CImage
import Foundation

/// A preview as 8-bit RGB pixels: decoded from the remote's JPEG (libjpeg-turbo), scaled to fit
/// a freedesktop size, written as PNG with its tEXt keys (libpng). Debian ships both libraries,
/// maintained, already on every desktop (GTK and Qt use them); no image tool is run.
struct ThumbnailImage {
    struct Failure: Error, CustomStringConvertible { let description: String }

    var width: Int
    var height: Int
    var rgb: [UInt8]

    /// Decodes a JPEG.
    init(jpeg: Data) throws {
        var w: Int32 = 0, h: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        let decoded: [UInt8]? = jpeg.withUnsafeBytes { raw in
            error.withUnsafeMutableBufferPointer { e in
                guard let base = raw.bindMemory(to: UInt8.self).baseAddress,
                      let pixels = favfs_jpeg_decode_rgb(base, raw.count, &w, &h, e.baseAddress, e.count) else { return nil }
                defer { favfs_image_free(pixels) }
                return Array(UnsafeBufferPointer(start: pixels, count: Int(w) * Int(h) * 3))
            }
        }
        guard let decoded else { throw Failure(description: Self.text(error)) }
        width = Int(w); height = Int(h); rgb = decoded
    }

    /// Scaled down (box filter) so neither side exceeds `size`; unchanged when it fits.
    func fitting(_ size: Int) -> ThumbnailImage {
        guard width > size || height > size else { return self }
        let scale = Double(max(width, height)) / Double(size)
        let w = max(1, Int((Double(width) / scale).rounded())), h = max(1, Int((Double(height) / scale).rounded()))
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            let y0 = y * height / h, y1 = max(y0 + 1, (y + 1) * height / h)
            for x in 0..<w {
                let x0 = x * width / w, x1 = max(x0 + 1, (x + 1) * width / w)
                var sum = (0, 0, 0), n = 0
                for sy in y0..<y1 { for sx in x0..<x1 {
                    let i = (sy * width + sx) * 3
                    sum.0 += Int(rgb[i]); sum.1 += Int(rgb[i + 1]); sum.2 += Int(rgb[i + 2]); n += 1
                } }
                let o = (y * w + x) * 3
                out[o] = UInt8(sum.0 / n); out[o + 1] = UInt8(sum.1 / n); out[o + 2] = UInt8(sum.2 / n)
            }
        }
        var scaled = self
        scaled.width = w; scaled.height = h; scaled.rgb = out
        return scaled
    }

    /// Writes a PNG with `text` as tEXt chunks (in this order).
    func writePNG(to path: String, text: [(String, String)]) throws {
        var error = [CChar](repeating: 0, count: 256)
        let keys = text.map { strdup($0.0) }, values = text.map { strdup($0.1) }
        defer { keys.forEach { free($0) }; values.forEach { free($0) } }
        let k = keys.map { UnsafePointer<CChar>($0) }, v = values.map { UnsafePointer<CChar>($0) }
        let rc = rgb.withUnsafeBufferPointer { pixels in
            k.withUnsafeBufferPointer { kb in
                v.withUnsafeBufferPointer { vb in
                    error.withUnsafeMutableBufferPointer { e in
                        favfs_png_write_rgb(path, pixels.baseAddress, Int32(width), Int32(height),
                                            kb.baseAddress, vb.baseAddress, Int32(text.count), e.baseAddress)
                    }
                }
            }
        }
        guard rc == 0 else { throw Failure(description: Self.text(error)) }
    }
}

extension ThumbnailImage {
    /// A NUL-terminated C message buffer as text.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The tEXt chunks of a PNG file (keyword → text), read without decoding the image: enough to
/// tell whether a thumbnail is up to date.
enum PNGText {
    static func read(_ path: String) -> [String: String]? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 8,
              data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        let bytes = [UInt8](data)
        var text: [String: String] = [:]
        var at = 8
        while at + 8 <= bytes.count {
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            guard length >= 0, at + 12 + length <= bytes.count else { return nil }
            if type == "tEXt" {
                let body = bytes[(at + 8)..<(at + 8 + length)]
                if let nul = body.firstIndex(of: 0) {
                    text[String(decoding: body[..<nul], as: UTF8.self)] = String(decoding: body[(nul + 1)...], as: Unicode.ASCII.self)
                }
            }
            if type == "IDAT" || type == "IEND" { break }   // text the thumbnail spec asks for comes first
            at += 12 + length
        }
        return text
    }
}
