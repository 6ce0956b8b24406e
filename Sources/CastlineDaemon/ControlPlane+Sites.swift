import CastCore
import CastLogging
import CastSender

/// Web pages and dashboards through the control plane (`POST /v1/devices/{device}/site`).
extension ControlPlane {
    /// Shows `site` on the device: a page is checked first (unless told not to), so an
    /// unreachable page fails before anything is launched, and a page that cannot be framed is
    /// forced. The answer says what was shown, how, and why.
    func site(_ reference: String, _ site: SiteArguments) async throws(ControlError) -> JSONValue {
        var preflight: SitePreflight?
        var force = false
        var notes: [JSONValue] = []
        if case .page(let url, let asked, _, let check) = site {
            if check {
                let checked = try await SitePreflight.check(url, group: group)
                preflight = checked
                if let reason = checked.forceReason {
                    if asked == false {
                        notes.append(.string("force is off as asked, but \(reason): the TV may stay blank"))
                    } else {
                        force = true
                        if asked == nil { notes.append(.string("sent with force: \(reason)")) }
                    }
                }
                if let type = checked.contentType, type != "text/html", type != "application/xhtml+xml" {
                    notes.append(.string("the URL is \(type), not a web page; `castline cast` shows media as media"))
                }
            } else {
                force = asked ?? JobDriver.needsForce(url)
            }
        }
        let (entry, link) = try await registry.link(reference)
        let device = entry.device
        try checkTurn(device)
        let (app, reply) = try await SiteShow.show(site, force: force, on: link, device: device, channels: pluginChannels)
        if case .page(let url, _, _, _) = site {
            await registry.claim(device.id, owner: CommandOwner.name, contentID: url,
                                 page: ShownPage(url: url, title: preflight?.title, appSession: app.sessionID))
        }
        log.info("\(device.friendlyName): showing \(site.label)", [
            "device": .string(device.id), "site": .string(site.label), "force": .bool(force), "app": .string(app.appID),
        ])
        daemon.events.emit(.device, "site", device: device.id, ["site": .string(site.label), "app": .string(app.appID)])
        var object = JSONObject()
        object.set("device", .string(device.friendlyName))
        object.set("id", .string(device.id))
        object.set("app", .string(app.appID))
        object.set("site", .string(site.label))
        if case .page = site { object.set("force", .bool(force)) }
        if let preflight {
            var checked = JSONObject()
            checked.set("status", .int(Int64(preflight.status)))
            if let type = preflight.contentType { checked.set("content_type", .string(type)) }
            if preflight.finalURL != site.label { checked.set("url", .string(preflight.finalURL)) }
            if let refusal = preflight.refusesFrames { checked.set("refuses_frames", .string(refusal)) }
            checked.set("mixed_content", .bool(preflight.mixedContent))
            object.set("preflight", .object(checked))
        }
        if !notes.isEmpty { object.set("notes", .array(notes)) }
        object.set("reply", reply)
        return .object(object)
    }
}
