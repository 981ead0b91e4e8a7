"""repairer"""
