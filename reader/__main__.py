from reader.cli import main

main()
