import Foundation
import PackagePlugin

/// Generates the D-Bus method table of the store service from its interface document,
/// `dbus/org.hrmd.Health1.xml`: the XML is the one place a method's arguments are written
/// down, and the service's vtable and the client's coding are made from it.
@main
struct InterfaceTablePlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let interface = context.package.directoryURL.appending(path: "dbus/org.hrmd.Health1.xml")
        let output = context.pluginWorkDirectoryURL.appending(path: "HealthInterface+Methods.swift")
        return [
            .buildCommand(
                displayName: "Generating the method table of org.hrmd.Health1",
                executable: try context.tool(named: "interface-table").url,
                arguments: [interface.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [interface],
                outputFiles: [output])
        ]
    }
}
