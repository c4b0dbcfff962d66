import Foundation
import PackagePlugin

/// Generates, at build time, `ShippedTemplates.swift` from
/// `templates/*/*.mustache` (`scripts/embed-templates.sh`) and
/// `ExampleConfig.swift` from `config.example.toml`
/// (`scripts/embed-example-config.sh`), so a template or the example is one file
/// to add or edit and no generated Swift is checked in. Build commands with
/// their files as inputs: each runs again only when one of them (or its script)
/// changes; the template list is read on every plan, so a new template or
/// locale folder is picked up.
@main
struct EmbedTemplates: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let folder = root.appending(path: "templates")
        let script = root.appending(path: "scripts/embed-templates.sh")
        let output = context.pluginWorkDirectoryURL.appending(path: "ShippedTemplates.swift")
        var inputs = [script]
        let files = FileManager.default
        for locale in (try? files.contentsOfDirectory(atPath: folder.path)) ?? [] where !locale.hasPrefix(".") {
            let directory = folder.appending(path: locale)
            for name in (try? files.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasSuffix(".mustache") {
                inputs.append(directory.appending(path: name))
            }
        }
        let example = root.appending(path: "config.example.toml")
        let exampleScript = root.appending(path: "scripts/embed-example-config.sh")
        let exampleOutput = context.pluginWorkDirectoryURL.appending(path: "ExampleConfig.swift")
        return [.buildCommand(displayName: "EmbedTemplates: the shipped templates into ShippedTemplates.swift",
                              executable: URL(fileURLWithPath: "/bin/bash"),
                              arguments: [script.path, output.path],
                              inputFiles: inputs.sorted { $0.path < $1.path },
                              outputFiles: [output]),
                .buildCommand(displayName: "EmbedTemplates: config.example.toml into ExampleConfig.swift",
                              executable: URL(fileURLWithPath: "/bin/bash"),
                              arguments: [exampleScript.path, exampleOutput.path],
                              inputFiles: [exampleScript, example],
                              outputFiles: [exampleOutput])]
    }
}
