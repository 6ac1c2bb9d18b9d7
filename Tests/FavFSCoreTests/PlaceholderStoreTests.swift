import XCTest
import FavFSCore

final class PlaceholderStoreTests: XCTestCase {
    /// SQLite found the database corrupt while in use (an index that disagrees with its table,
    /// which PRAGMA quick_check at the next open does not see): the marker it leaves makes the
    /// next open refuse the database, so the mount sets it aside instead of using it damaged.
    func testADatabaseReportedCorruptIsNotOpenedAgain() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/p.sqlite"
        let s = try PlaceholderStore(path: path)
        try s.upsert(Item(identifier: ItemIdentifier("/a"), kind: .file, size: 1))
        s.noteIfCorrupt(NSError(domain: "not SQLite", code: 11))
        XCTAssertFalse(FileManager.default.fileExists(atPath: PlaceholderStore.damageMarker(path)), "a non-SQLite error marked it")
        s.noteCorruption("SQLite error 11: database disk image is malformed")
        s.close()
        XCTAssertThrowsError(try PlaceholderStore(path: path)) { error in
            XCTAssertTrue("\(error)".contains("malformed"), "\(error)")
        }
    }

    func testReplacingChildrenRemovesVanishedSubtreesOnly() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try PlaceholderStore(path: dir + "/p.sqlite")
        let root = Item(identifier: .rootContainer, kind: .folder)
        let a = ItemIdentifier("/a%_"), ab = ItemIdentifier("/a%_b") // LIKE wildcards in names
        try s.replaceChildren(of: root, with: [Item(identifier: a, kind: .folder), Item(identifier: ab, kind: .folder)], listedAt: 1)
        try s.replaceChildren(of: Item(identifier: a, kind: .folder), with: [Item(identifier: a.child("x"), kind: .file, size: 3)], listedAt: 2)
        try s.replaceChildren(of: Item(identifier: ab, kind: .folder), with: [Item(identifier: ab.child("y"), kind: .file)], listedAt: 2)
        XCTAssertEqual(try s.item(a)?.listedAt, 2)
        // A relisting of the root keeps a's own listing time.
        try s.replaceChildren(of: root, with: [Item(identifier: a, kind: .folder), Item(identifier: ab, kind: .folder)], listedAt: 3)
        XCTAssertEqual(try s.item(a)?.listedAt, 2)
        // a vanishes: it and its subtree go; a%_b (a prefix match for LIKE) stays.
        try s.replaceChildren(of: root, with: [Item(identifier: ab, kind: .folder)], listedAt: 4)
        XCTAssertNil(try s.item(a))
        XCTAssertNil(try s.item(a.child("x")))
        XCTAssertNotNil(try s.item(ab.child("y")))
        XCTAssertEqual(try s.children(of: .rootContainer).map(\.item.name), ["a%_b"])
    }

    /// Times kept for a remote that keeps none survive a reopen, move with a rename (rsync's
    /// temporary file becoming the file) and go with a removed subtree.
    func testKeptTimesPersistMoveAndGoWithTheirItems() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = try PlaceholderStore(path: dir + "/p.sqlite")
        let t = Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789)
        for id in ["/d/.f.tmp", "/d/g", "/dx/h"] { try s.upsert(Item(identifier: ItemIdentifier(id), kind: .file, size: 1)) }
        try s.keepTime(.init(id: ItemIdentifier("/d/.f.tmp"), version: "v1", time: t))
        try s.keepTime(.init(id: ItemIdentifier("/d/g"), version: "v2", time: t))
        try s.keepTime(.init(id: ItemIdentifier("/dx/h"), version: "v3", time: t))
        try s.move(ItemIdentifier("/d/.f.tmp"), to: ItemIdentifier("/d/f"))
        s.close()
        s = try PlaceholderStore(path: dir + "/p.sqlite")
        XCTAssertEqual(try s.keptTimes().map(\.id.rawValue).sorted(), ["/d/f", "/d/g", "/dx/h"])
        XCTAssertEqual(try s.keptTimes().first { $0.id.rawValue == "/d/f" }, .init(id: ItemIdentifier("/d/f"), version: "v1", time: t))
        try s.removeSubtree(ItemIdentifier("/d"))
        XCTAssertEqual(try s.keptTimes().map(\.id.rawValue), ["/dx/h"], "a sibling sharing the prefix stays")
        s.close()
    }

    /// What attempts whose answer was lost sent stays with the journal row across a reopen
    /// (a crash) and a later save of the row, and goes with the row.
    func testLostRepliesStayWithTheJournalRow() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = try PlaceholderStore(path: dir + "/p.sqlite")
        let id = ItemIdentifier("/a.txt")
        var row = JournalEntry(id: id, baseVersion: nil, isNew: true, since: 1)
        try s.saveJournal(row)
        let sent = [SentContent(length: 198, digest: (0..<32).map { UInt8($0 * 7 % 256) }),
                    SentContent(length: 0, digest: [UInt8](repeating: 255, count: 32))]
        try s.saveLostReplies(id, sent)
        row.attempts = 3
        try s.saveJournal(row)   // an attempt recorded after
        s.close()
        s = try PlaceholderStore(path: dir + "/p.sqlite")
        XCTAssertEqual(try s.journalEntries().first?.lostReplies, sent)
        XCTAssertEqual(try s.journalEntries().first?.attempts, 3)
        try s.deleteJournal(id)
        try s.saveJournal(JournalEntry(id: id, baseVersion: "v", isNew: false, since: 2))
        XCTAssertEqual(try s.journalEntries().first?.lostReplies, [], "a new row starts without")
        s.close()
    }

    /// A listing that saw the server's move before the rename here was recorded (a push
    /// change feed echoing our own rename: Dropbox) leaves the kept time of the name it no
    /// longer sees, so the rename still takes it to the new name; what stays without a
    /// placeholder is dropped at the next open. The listing removed it before: the time held in
    /// memory, and after a remount `rsync -a` sent the file again.
    func testAListingThatSawTheMoveFirstLeavesTheKeptTimeForTheRename() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = try PlaceholderStore(path: dir + "/p.sqlite")
        let folder = Item(identifier: ItemIdentifier("/d"), kind: .folder)
        let temp = ItemIdentifier("/d/.f.bin.XYZ"), file = ItemIdentifier("/d/f.bin"), gone = ItemIdentifier("/d/gone")
        let t = Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789)
        try s.replaceChildren(of: folder, with: [Item(identifier: temp, kind: .file, size: 1, version: "r1"),
                                                 Item(identifier: gone, kind: .file, size: 1, version: "r9")], listedAt: 1)
        try s.keepTime(.init(id: temp, version: "r1", time: t))
        try s.keepTime(.init(id: gone, version: "r9", time: t))
        // The listing after the server's move: the file under its new name, the temporary one gone.
        try s.replaceChildren(of: folder, with: [Item(identifier: file, kind: .file, size: 1, version: "r1")], listedAt: 2)
        try s.move(temp, to: file)
        try s.upsert(Item(identifier: file, kind: .file, size: 1, modifiedTime: t, version: "r1"))
        s.close()
        s = try PlaceholderStore(path: dir + "/p.sqlite")
        XCTAssertEqual(try s.keptTimes(), [.init(id: file, version: "r1", time: t)],
                       "the rename lost its kept time, or a time without a placeholder stayed")
        s.close()
    }

    /// Another client made a folder at the name of a file written here and not uploaded yet
    /// (refused, or its upload pending): a listing of that folder saved meanwhile leaves the
    /// file's placeholder as it is. Overwritten, the next mount showed the folder there and hid
    /// the file's only copy.
    func testAListingOfAFolderAtADirtyFilesNameLeavesTheFile() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try PlaceholderStore(path: dir + "/p.sqlite")
        let id = ItemIdentifier("/é")
        try s.replaceChildren(of: Item(identifier: .rootContainer, kind: .folder),
                              with: [Item(identifier: id, kind: .file, size: 10, version: "v1")], listedAt: 1)
        try s.saveJournal(.init(id: id, baseVersion: "v1", isNew: false, since: 5))
        try s.replaceChildren(of: Item(identifier: id, kind: .folder),
                              with: [Item(identifier: id.child("c.md"), kind: .file, size: 3, version: "w")], listedAt: 2)
        XCTAssertEqual(try s.children(of: .rootContainer).map(\.item.kind), [.file], "the dirty file's placeholder became a folder")
        XCTAssertEqual(try s.children(of: id).count, 0, "a file has no children")
        s.close()
    }

    /// Names beyond ASCII (a byte is not a character) and names that sort right after a folder's
    /// (`Café-x`, `Café0`: `-` sorts before `/`, `0` right after it): a rename moves exactly the
    /// folder's placeholders, content records, journal rows, kept times and pins, and a delete
    /// removes exactly them. A dirty file's journal row left behind at the old name would be
    /// uploaded there after the next mount, bringing the old folder back.
    func testRenamesAndDeletesOfFoldersNamedBeyondASCIITakeExactlyTheirSubtree() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = try PlaceholderStore(path: dir + "/p.sqlite")
        let cafe = ItemIdentifier("/Café ☕"), sub = ItemIdentifier("/Café ☕/日本")
        let file = sub.child("ü.txt"), neighbours = [ItemIdentifier("/Café ☕-x"), ItemIdentifier("/Café ☕0"), ItemIdentifier("/Café")]
        try s.replaceChildren(of: Item(identifier: .rootContainer, kind: .folder),
                              with: [Item(identifier: cafe, kind: .folder)] + neighbours.map { Item(identifier: $0, kind: .file, size: 1) }, listedAt: 1)
        try s.replaceChildren(of: Item(identifier: cafe, kind: .folder), with: [Item(identifier: sub, kind: .folder)], listedAt: 1)
        try s.replaceChildren(of: Item(identifier: sub, kind: .folder), with: [Item(identifier: file, kind: .file, size: 2)], listedAt: 1)
        let t = Timestamp(seconds: 1_600_000_000, nanoseconds: 5)
        for (n, id) in ([file] + neighbours).enumerated() {
            try s.saveJournal(.init(id: id, baseVersion: "v", isNew: false, since: Double(n)),
                              content: .init(id: id, file: "\(n)", version: "v", size: 2, ranges: ByteRangeSet(), lastUsed: 1, pinned: false))
            try s.keepTime(.init(id: id, version: "v", time: t))
        }
        try s.addPin(sub)
        try s.addPin(neighbours[0])

        let moved = ItemIdentifier("/Thé")
        try s.move(cafe, to: moved)
        try s.movePins(cafe, to: moved)
        s.close()
        s = try PlaceholderStore(path: dir + "/p.sqlite")
        let movedFile = ItemIdentifier("/Thé/日本/ü.txt")
        XCTAssertEqual(try s.children(of: .rootContainer).map(\.item.name).sorted(), ["Café", "Café ☕-x", "Café ☕0", "Thé"])
        XCTAssertEqual(try s.children(of: ItemIdentifier("/Thé/日本")).map(\.item.identifier), [movedFile], "the placeholders below moved")
        XCTAssertEqual(try s.children(of: moved).map(\.item.name), ["日本"])
        XCTAssertNil(try s.item(file), "a placeholder stayed at the old name")
        XCTAssertEqual(try s.journalEntries().map(\.id.rawValue).sorted(), ([movedFile] + neighbours).map(\.rawValue).sorted())
        XCTAssertEqual(try s.contentRecord(movedFile)?.file, "0")
        XCTAssertNil(try s.contentRecord(file))
        XCTAssertEqual(try s.keptTimes().map(\.id.rawValue).sorted(), ([movedFile] + neighbours).map(\.rawValue).sorted())
        XCTAssertEqual(try s.pins().map(\.rawValue).sorted(), ["/Café ☕-x", "/Thé/日本"])

        try s.removeSubtree(moved)
        XCTAssertNil(try s.item(movedFile))
        XCTAssertEqual(try s.keptTimes().map(\.id.rawValue).sorted(), neighbours.map(\.rawValue).sorted())
        try s.removePin(moved)
        XCTAssertEqual(try s.pins().map(\.rawValue), ["/Café ☕-x"], "a neighbour's pin went with the folder")
        for id in neighbours { XCTAssertNotNil(try s.item(id), "\(id) went with the folder") }
        s.close()
    }

    /// A listing fetched before a file was created or rewritten here (it has a journal row)
    /// neither removes nor overwrites its placeholder.
    func testReplacingChildrenKeepsWhatIsWrittenHere() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try PlaceholderStore(path: dir + "/p.sqlite")
        let folder = Item(identifier: ItemIdentifier("/f"), kind: .folder)
        let listed = folder.identifier.child("listed"), created = folder.identifier.child("created"), edited = folder.identifier.child("edited")
        let other = ItemIdentifier("/g/created")  // a journal row under another folder is not this folder's
        try s.replaceChildren(of: folder, with: [Item(identifier: listed, kind: .file, size: 1), Item(identifier: edited, kind: .file, size: 2)], listedAt: 1)
        try s.saveJournal(.init(id: created, baseVersion: nil, isNew: true, since: 2), with: Item(identifier: created, kind: .file, size: 7))
        try s.saveJournal(.init(id: edited, baseVersion: "v1", isNew: false, since: 2), with: Item(identifier: edited, kind: .file, size: 9))
        try s.saveJournal(.init(id: other, baseVersion: nil, isNew: true, since: 2), with: Item(identifier: other, kind: .file, size: 1))
        // The remote's listing, fetched before: no "created", "edited" at its old size.
        try s.replaceChildren(of: folder, with: [Item(identifier: listed, kind: .file, size: 1), Item(identifier: edited, kind: .file, size: 2)], listedAt: 3)
        XCTAssertEqual(try s.item(created)?.item.size, 7, "a file created here vanished with a listing that predates it")
        XCTAssertEqual(try s.item(edited)?.item.size, 9, "a file rewritten here took the listing's older size")
        // Once uploaded (no journal row), the listing is the truth again.
        try s.deleteJournal(edited)
        try s.replaceChildren(of: folder, with: [Item(identifier: listed, kind: .file, size: 1)], listedAt: 4)
        XCTAssertNil(try s.item(edited))
        XCTAssertEqual(try s.item(created)?.item.size, 7)
    }
}
