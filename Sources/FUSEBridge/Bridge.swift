import FavFSCore
