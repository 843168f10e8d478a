import Foundation
import PackagePlugin

/// Generates the D-Bus method table of the store service from its interface document,
/// `dbus/org.hrmd.Health1.xml`: the XML is the one place a method's arguments are written
/// down, and the service's vtable and the client's coding are made from it. The generator is
/// a Python script (`Plugins/interface_table.py`), so that no host tool is compiled with the
/// flags of the build it serves (sanitizers, fuzzing).
@main
struct InterfaceTablePlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let package = context.package.directoryURL
        let interface = package.appending(path: "dbus/org.hrmd.Health1.xml")
        let generator = package.appending(path: "Plugins/interface_table.py")
        let output = context.pluginWorkDirectoryURL.appending(path: "HealthInterface+Methods.swift")
        return [
            .buildCommand(
                displayName: "Generating the method table of org.hrmd.Health1",
                executable: URL(fileURLWithPath: "/usr/bin/python3"),
                arguments: [generator.path(percentEncoded: false), interface.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [interface, generator],
                outputFiles: [output])
        ]
    }
}
