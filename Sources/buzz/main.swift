// The `buzz` executable: everything it does is in the BuzzCommands library
// (argument parsing, wiring, the daemon), which tests and other programs can
// use without this target.
import BuzzCommands

await Buzz.main()
