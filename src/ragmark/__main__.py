from ragmark.cli import main

main()
