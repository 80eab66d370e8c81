from opinion_tagger.cli import console

console()
