from tagger.cli import console

console()
